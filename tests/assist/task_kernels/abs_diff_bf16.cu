// Reference kernel for the task abs_diff_bf16.
#include <cuda_bf16.h>
extern "C" __global__ void abs_diff_bf16(const __nv_bfloat16* __restrict__ a,
                                         const __nv_bfloat16* __restrict__ b,
                                         float* __restrict__ y,
                                         int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fabsf(__bfloat162float(a[i]) - __bfloat162float(b[i]));
    }
}
