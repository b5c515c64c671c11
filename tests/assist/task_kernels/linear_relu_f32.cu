// Reference kernel for the task linear_relu_f32.
extern "C" __global__ void linear_relu_f32(const float* __restrict__ X,
                                           const float* __restrict__ W,
                                           const float* __restrict__ bias,
                                           float* __restrict__ Y,
                                           int M,
                                           int N,
                                           int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float v = bias[col];
        for (int k = 0; k < K; ++k) {
            v += X[(size_t)row * K + k] * W[(size_t)col * K + k];
        }
        v = fmaxf(v, 0.0f);
        Y[(size_t)row * N + col] = v;
    }
}
