// Reference kernel for the task swiglu_f32.
extern "C" __global__ void swiglu_f32(const float* __restrict__ X,
                                      const float* __restrict__ W1,
                                      const float* __restrict__ W2,
                                      float* __restrict__ Y,
                                      int M,
                                      int N,
                                      int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float g = 0.0f;
        float u = 0.0f;
        for (int k = 0; k < K; ++k) {
            float x = X[(size_t)row * K + k];
            g += x * W1[(size_t)col * K + k];
            u += x * W2[(size_t)col * K + k];
        }
        Y[(size_t)row * N + col] = g / (1.0f + expf(-g)) * u;
    }
}
