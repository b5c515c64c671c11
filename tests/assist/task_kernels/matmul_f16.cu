// Reference kernel for the task matmul_f16.
#include <cuda_fp16.h>
extern "C" __global__ void matmul_f16(const __half* __restrict__ A,
                                      const __half* __restrict__ B,
                                      __half* __restrict__ C,
                                      int M,
                                      int N,
                                      int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float s = 0;
        for (int k = 0; k < K; ++k) {
            s += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)k * N + col]);
        }
        C[(size_t)row * N + col] = __float2half_rn(s);
    }
}
