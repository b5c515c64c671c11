// Reference kernel for the task layernorm_f32.
extern "C" __global__ void layernorm_f32(const float* __restrict__ x,
                                         float* __restrict__ y,
                                         int rows,
                                         int cols,
                                         float eps)
{
    int r = blockIdx.x;
    const float* row = x + (size_t)r * cols;
    __shared__ float part[256];
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = row[c];
        s += v;
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
    float mean = first / cols;
    s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float d = row[c] - mean;
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
    float var = part[0] / cols;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = row[c];
        y[(size_t)r * cols + c] = (v - mean) * rsqrtf(var + eps);
    }
}
