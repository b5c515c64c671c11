// Reference kernel for the task linear_gelu_f16.
#include <cuda_fp16.h>
extern "C" __global__ void linear_gelu_f16(const __half* __restrict__ X,
                                           const __half* __restrict__ W,
                                           const __half* __restrict__ bias,
                                           __half* __restrict__ Y,
                                           int M,
                                           int N,
                                           int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float v = __half2float(bias[col]);
        for (int k = 0; k < K; ++k) {
            v += __half2float(X[(size_t)row * K + k]) * __half2float(W[(size_t)col * K + k]);
        }
        v = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
        Y[(size_t)row * N + col] = __float2half_rn(v);
    }
}
