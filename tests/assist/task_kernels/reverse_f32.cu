// Reference kernel for the task reverse_f32.
extern "C" __global__ void reverse_f32(const float* __restrict__ x,
                                       float* __restrict__ y,
                                       int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[n - 1 - i];
    }
}
