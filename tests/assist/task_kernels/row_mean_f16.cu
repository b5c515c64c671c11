// Reference kernel for the task row_mean_f16.
#include <cuda_fp16.h>
extern "C" __global__ void row_mean_f16(const __half* __restrict__ x,
                                        __half* __restrict__ y,
                                        int rows,
                                        int cols)
{
    int r = blockIdx.x;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        s += __half2float(x[(size_t)r * cols + c]);
    }
    __shared__ float part[256];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            part[threadIdx.x] += part[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        y[r] = __float2half_rn(part[0] / cols);
    }
}
