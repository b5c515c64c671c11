// Reference kernel for the task silu_f16.
#include <cuda_fp16.h>
extern "C" __global__ void silu_f16(const __half* __restrict__ x,
                                    __half* __restrict__ y,
                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __half2float(x[i]);
        y[i] = __float2half_rn(v / (1.0f + expf(-v)));
    }
}
