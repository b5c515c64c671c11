// Reference kernel for the task transpose_bf16.
#include <cuda_bf16.h>
extern "C" __global__ void transpose_bf16(const __nv_bfloat16* __restrict__ x,
                                          __nv_bfloat16* __restrict__ y,
                                          int rows,
                                          int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        y[(size_t)c * rows + r] = x[(size_t)r * cols + c];
    }
}
