// Reference kernel for the task l2_normalize_f32.
extern "C" __global__ void l2_normalize_f32(const float* __restrict__ x,
                                            float* __restrict__ y,
                                            int rows,
                                            int cols)
{
    int r = blockIdx.x;
    const float* row = x + (size_t)r * cols;
    __shared__ float part[256];
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = row[c];
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
    float scale = rsqrtf(first);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = row[c];
        y[(size_t)r * cols + c] = v * scale;
    }
}
