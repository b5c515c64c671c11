// Reference kernel for the task dot_f32.
extern "C" __global__ void dot_f32(const float* __restrict__ a,
                                   const float* __restrict__ b,
                                   float* __restrict__ total,
                                   int n)
{
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        s += a[i] * b[i];
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
        atomicAdd(total, part[0]);
    }
}
