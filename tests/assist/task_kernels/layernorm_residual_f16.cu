// Reference kernel for the task layernorm_residual_f16.
#include <cuda_fp16.h>
extern "C" __global__ void layernorm_residual_f16(const __half* __restrict__ x,
                                                  const __half* __restrict__ res,
                                                  const __half* __restrict__ gamma,
                                                  const __half* __restrict__ beta,
                                                  __half* __restrict__ y,
                                                  int rows,
                                                  int cols,
                                                  float eps)
{
    int r = blockIdx.x;
    const __half* xr = x + (size_t)r * cols;
    const __half* rr = res + (size_t)r * cols;
    __shared__ float part[256];
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        s += __half2float(xr[c]) + __half2float(rr[c]);
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            part[threadIdx.x] += part[threadIdx.x + half];
        }
        __syncthreads();
    }
    float mean = part[0] / cols;
    __syncthreads();
    s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = __half2float(xr[c]) + __half2float(rr[c]) - mean;
        s += d * d;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            part[threadIdx.x] += part[threadIdx.x + half];
        }
        __syncthreads();
    }
    float inv = rsqrtf(part[0] / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = __half2float(xr[c]) + __half2float(rr[c]);
        float out = (v - mean) * inv * __half2float(gamma[c]) + __half2float(beta[c]);
        y[(size_t)r * cols + c] = __float2half_rn(out);
    }
}
