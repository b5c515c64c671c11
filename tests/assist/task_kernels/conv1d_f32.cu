// Reference kernel for the task conv1d_f32.
extern "C" __global__ void conv1d_f32(const float* __restrict__ x,
                                      const float* __restrict__ w,
                                      float* __restrict__ y,
                                      int n,
                                      int k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n - k + 1) {
        float s = 0.0f;
        for (int j = 0; j < k; ++j) {
            s += x[i + j] * w[j];
        }
        y[i] = s;
    }
}
