// vector_add: c = a + b, one thread per element.
//
// The smallest useful CUDA kernel, and the shape most elementwise kernels share: work out which
// element this thread owns, check that it exists, do the arithmetic.

extern "C" __global__ void vector_add(const float* __restrict__ a,
                                      const float* __restrict__ b,
                                      float* __restrict__ c,
                                      int n)
{
    // The grid is rounded up to whole blocks (cdiv(n, 256) in the spec), so the last block
    // usually has threads past the end of the data. Without this check they would write past
    // the end of c: the verifier's guard zones exist to catch exactly that mistake.
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        // Neighbouring threads touch neighbouring addresses, so each warp's 32 loads merge into
        // a few wide memory transactions ("coalescing"). For a kernel that does one add per 12
        // bytes moved, memory bandwidth is the whole story.
        c[i] = a[i] + b[i];
    }
}
