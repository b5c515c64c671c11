// Reference kernel for the task fma_f32.
extern "C" __global__ void fma_f32(const float* __restrict__ a,
                                   const float* __restrict__ b,
                                   const float* __restrict__ c,
                                   float* __restrict__ d,
                                   int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        d[i] = fmaf(a[i], b[i], c[i]);
    }
}
