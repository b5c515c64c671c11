// Reference kernel for the task maximum_f32.
extern "C" __global__ void maximum_f32(const float* __restrict__ a,
                                       const float* __restrict__ b,
                                       float* __restrict__ c,
                                       int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = fmaxf(a[i], b[i]);
    }
}
