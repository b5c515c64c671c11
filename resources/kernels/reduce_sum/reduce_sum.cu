// reduce_sum: total += sum(x), in three levels: each thread, each warp, each block.
//
// A reduction turns n values into one, so the work has to funnel together somewhere. The cheap
// places to combine values are registers (within a thread), warp shuffles (within a warp, no
// memory at all) and a little shared memory (within a block). Only one value per block goes
// to global memory, through a single atomicAdd.

constexpr unsigned FULL_MASK = 0xffffffffu;  // all 32 lanes take part in the shuffle

// Sum over the 32 lanes of a warp. Each step folds the upper half of the remaining lanes onto
// the lower half; after five steps lane 0 holds the warp's total. The other lanes end with
// partial sums that nobody reads.
__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(FULL_MASK, v, offset);
    }
    return v;
}

// Launch with a block size that is a multiple of 32 (the spec uses 256): the shuffles assume
// every lane of every warp is present.
extern "C" __global__ void reduce_sum(const float* __restrict__ x, float* total, int n)
{
    __shared__ float warp_totals[32];  // one slot per warp; 32 warps is the 1024-thread maximum

    // Level 1: a grid-stride loop, so a capped grid covers any n and most of the adding happens
    // in registers, before any communication between threads.
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        v += x[i];
    }

    // Level 2: combine the 32 lanes of each warp without touching memory.
    v = warp_sum(v);
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    if (lane == 0) {
        warp_totals[warp] = v;
    }
    // Every warp's total must be in shared memory before warp 0 reads them.
    __syncthreads();

    // Level 3: the first warp adds up the per-warp totals (lanes beyond the warp count add 0).
    if (warp == 0) {
        int warps = blockDim.x / 32;
        v = lane < warps ? warp_totals[lane] : 0.0f;
        v = warp_sum(v);
        // One atomic per block. The blocks finish in no fixed order, so the last bits of the
        // result can change from run to run: that is why the spec widens the tolerance. The
        // accumulator is an inout buffer that starts at zero; an out buffer would start as
        // the verifier's NaN poison, and NaN plus anything stays NaN.
        if (lane == 0) {
            atomicAdd(total, v);
        }
    }
}
