// Reference kernel for the task sub_scaled_f32.
extern "C" __global__ void sub_scaled_f32(const float* __restrict__ a,
                                          const float* __restrict__ b,
                                          float* __restrict__ c,
                                          float alpha,
                                          int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] - alpha * b[i];
    }
}
