// Reference kernel for the task softmax_f16.
#include <cuda_fp16.h>
extern "C" __global__ void softmax_f16(const __half* __restrict__ x,
                                       __half* __restrict__ y,
                                       int rows,
                                       int cols)
{
    int r = blockIdx.x;
    const __half* row = x + (size_t)r * cols;
    __shared__ float part[256];
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        m = fmaxf(m, __half2float(row[c]));
    }
    part[threadIdx.x] = m;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + half]);
        }
        __syncthreads();
    }
    m = part[0];
    __syncthreads();
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        s += expf(__half2float(row[c]) - m);
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            part[threadIdx.x] += part[threadIdx.x + half];
        }
        __syncthreads();
    }
    s = part[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        y[(size_t)r * cols + c] = __float2half_rn(expf(__half2float(row[c]) - m) / s);
    }
}
