// Reference kernel for the task batched_matmul_f32.
extern "C" __global__ void batched_matmul_f32(const float* __restrict__ A,
                                              const float* __restrict__ B,
                                              float* __restrict__ C,
                                              int batch,
                                              int M,
                                              int N,
                                              int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (row < M && col < N) {
        const float* a = A + (size_t)b * M * K;
        const float* bm = B + (size_t)b * K * N;
        float s = 0.0f;
        for (int k = 0; k < K; ++k) {
            s += a[(size_t)row * K + k] * bm[(size_t)k * N + col];
        }
        C[(size_t)b * M * N + (size_t)row * N + col] = s;
    }
}
