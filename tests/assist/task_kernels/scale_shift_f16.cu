// Reference kernel for the task scale_shift_f16.
#include <cuda_fp16.h>
extern "C" __global__ void scale_shift_f16(const __half* __restrict__ x,
                                           const __half* __restrict__ gamma,
                                           const __half* __restrict__ beta,
                                           __half* __restrict__ y,
                                           int rows,
                                           int cols)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < rows * cols) {
        int c = i % cols;
        y[i] = __float2half_rn(__half2float(x[i]) * __half2float(gamma[c]) + __half2float(beta[c]));
    }
}
