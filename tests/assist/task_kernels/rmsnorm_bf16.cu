// Reference kernel for the task rmsnorm_bf16.
#include <cuda_bf16.h>
extern "C" __global__ void rmsnorm_bf16(const __nv_bfloat16* __restrict__ x,
                                        const __nv_bfloat16* __restrict__ w,
                                        __nv_bfloat16* __restrict__ y,
                                        int rows,
                                        int cols,
                                        float eps)
{
    int r = blockIdx.x;
    const __nv_bfloat16* row = x + (size_t)r * cols;
    __shared__ float part[256];
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = __bfloat162float(row[c]);
        s += v * v;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            part[threadIdx.x] += part[threadIdx.x + half];
        }
        __syncthreads();
    }
    float first = part[0];
    __syncthreads();
    float scale = rsqrtf(first / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = __bfloat162float(row[c]);
        y[(size_t)r * cols + c] = __float2bfloat16_rn(v * scale * __bfloat162float(w[c]));
    }
}
