// Reference kernel for the task gelu_bf16.
#include <cuda_bf16.h>
extern "C" __global__ void gelu_bf16(const __nv_bfloat16* __restrict__ x,
                                     __nv_bfloat16* __restrict__ y,
                                     int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __bfloat162float(x[i]);
        float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
        y[i] = __float2bfloat16_rn(0.5f * v * (1.0f + tanhf(inner)));
    }
}
