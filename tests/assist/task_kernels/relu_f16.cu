// Reference kernel for the task relu_f16.
#include <cuda_fp16.h>
extern "C" __global__ void relu_f16(const __half* __restrict__ x,
                                    __half* __restrict__ y,
                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __half2float(x[i]);
        y[i] = __float2half_rn(v > 0.0f ? v : 0.0f);
    }
}
