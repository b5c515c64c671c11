// Reference kernel for the task matmul_bf16.
#include <cuda_bf16.h>
extern "C" __global__ void matmul_bf16(const __nv_bfloat16* __restrict__ A,
                                       const __nv_bfloat16* __restrict__ B,
                                       __nv_bfloat16* __restrict__ C,
                                       int M,
                                       int N,
                                       int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float s = 0;
        for (int k = 0; k < K; ++k) {
            s += __bfloat162float(A[(size_t)row * K + k]) * __bfloat162float(B[(size_t)k * N + col]);
        }
        C[(size_t)row * N + col] = __float2bfloat16_rn(s);
    }
}
