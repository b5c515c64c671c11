// scan: inclusive prefix sum of each row, y[r, j] = x[r, 0] + ... + x[r, j].
//
// One block per row, however long the row. The block walks the row in chunks of
// THREADS * ITEMS elements and carries the running total from one chunk to the next, so the
// same code is correct for 1 element or a million. (Very long single rows would rather use a
// multi-block design, scanning block totals in a second pass; this one keeps to a single
// launch and a single block per row, which is simple and already fast for many rows.)
//
// Inside a chunk, the work splits by the same three levels as a reduction:
//   1. each thread scans ITEMS consecutive elements in registers, sequentially;
//   2. a warp scans its 32 thread totals with shuffles (Hillis-Steele, log2(32) = 5 steps);
//   3. one warp scans the per-warp totals, which then offset every later warp.

constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr int THREADS = 256;                // blockDim.x must equal this
constexpr int ITEMS = 4;                    // elements per thread per chunk
constexpr int WARPS = THREADS / 32;
constexpr int CHUNK = THREADS * ITEMS;

// Inclusive scan across the lanes of a warp: after the step with offset d, each lane holds the
// sum of the 2d lanes ending at itself. Lanes below d have nobody d places to their left and
// keep their value.
__device__ float warp_inclusive_scan(float v, int lane)
{
    for (int offset = 1; offset < 32; offset <<= 1) {
        float left = __shfl_up_sync(FULL_MASK, v, offset);
        if (lane >= offset) {
            v += left;
        }
    }
    return v;
}

extern "C" __global__ void scan(const float* __restrict__ x,
                                float* __restrict__ y,
                                int rows,
                                int cols)
{
    __shared__ float warp_totals[WARPS];
    int row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;

    // The sum of every earlier chunk. All threads compute the same value, so no thread has to
    // broadcast it.
    float carry = 0.0f;

    for (int base = 0; base < cols; base += CHUNK) {
        // Level 1. A thread owns ITEMS neighbours, so each load instruction of a warp is
        // strided by ITEMS floats; the other ITEMS - 1 loads hit the same cache lines, so DRAM
        // still sees each byte once. Elements past the end count as 0 and are never stored.
        int first = base + threadIdx.x * ITEMS;
        float part[ITEMS];
        float running = 0.0f;
        for (int k = 0; k < ITEMS; ++k) {
            int j = first + k;
            running += j < cols ? xr[j] : 0.0f;
            part[k] = running;
        }

        // Level 2. `inclusive` counts this thread's elements too; shifting it up one lane gives
        // the exclusive sum (everything before this thread in the warp).
        float inclusive = warp_inclusive_scan(running, lane);
        float exclusive = __shfl_up_sync(FULL_MASK, inclusive, 1);
        if (lane == 0) {
            exclusive = 0.0f;
        }
        if (lane == 31) {
            warp_totals[warp] = inclusive;
        }
        __syncthreads();

        // Level 3. Warp 0 turns the warp totals into their own inclusive scan, in place.
        if (warp == 0) {
            float t = lane < WARPS ? warp_totals[lane] : 0.0f;
            t = warp_inclusive_scan(t, lane);
            if (lane < WARPS) {
                warp_totals[lane] = t;
            }
        }
        __syncthreads();

        float offset = carry + exclusive + (warp > 0 ? warp_totals[warp - 1] : 0.0f);
        for (int k = 0; k < ITEMS; ++k) {
            int j = first + k;
            if (j < cols) {
                yr[j] = offset + part[k];
            }
        }
        carry += warp_totals[WARPS - 1];

        // warp_totals is rewritten by the next chunk: nobody may start that before every
        // thread has read what it needs from this one.
        __syncthreads();
    }
}
