// histogram: count how many bytes of `data` take each of the 256 possible values.
//
// Many threads incrementing the same few global counters serialise on them (and on a skewed
// input, a single hot bin would take the whole GPU's atomics). So each block first counts into
// its own private copy of the histogram in shared memory, where atomics are cheap and only
// the block's own threads compete, and then adds its 256 counts into the global result: 256
// global atomics per block instead of one per element.

constexpr int BINS = 256;

extern "C" __global__ void histogram(const unsigned char* __restrict__ data,
                                     unsigned int* hist,
                                     int n)
{
    __shared__ unsigned int local[BINS];

    // Shared memory starts with whatever the previous block left there: clear it first. The
    // loop works for any block size, larger or smaller than BINS.
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();

    // A grid-stride loop: the grid is capped in the spec, so each block counts many elements
    // and the cost of clearing and merging its private histogram is spread over them.
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[data[i]], 1u);
    }
    // All counting into `local` must be finished before it is read out.
    __syncthreads();

    // Merge. Integer addition is associative, so unlike a float reduction the result is exact
    // whatever order the blocks arrive in. Empty bins skip their atomic. `hist` is an inout
    // buffer that starts at zero: an out buffer would start as the verifier's poison pattern.
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) {
        unsigned int count = local[b];
        if (count != 0) {
            atomicAdd(&hist[b], count);
        }
    }
}
