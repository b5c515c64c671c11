// Reference kernel for the task matmul_i32.
extern "C" __global__ void matmul_i32(const int* __restrict__ A,
                                      const int* __restrict__ B,
                                      int* __restrict__ C,
                                      int M,
                                      int N,
                                      int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        int s = 0;
        for (int k = 0; k < K; ++k) {
            s += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        C[(size_t)row * N + col] = s;
    }
}
