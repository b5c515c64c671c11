// Reference kernel for the task matmul_f32.
extern "C" __global__ void matmul_f32(const float* __restrict__ A,
                                      const float* __restrict__ B,
                                      float* __restrict__ C,
                                      int M,
                                      int N,
                                      int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float s = 0;
        for (int k = 0; k < K; ++k) {
            s += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        C[(size_t)row * N + col] = s;
    }
}
