// Reference kernel for the task outer_f32.
extern "C" __global__ void outer_f32(const float* __restrict__ x,
                                     const float* __restrict__ y,
                                     float* __restrict__ C,
                                     int m,
                                     int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < m && j < n) {
        C[i * n + j] = x[i] * y[j];
    }
}
