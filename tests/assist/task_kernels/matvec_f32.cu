// Reference kernel for the task matvec_f32.
extern "C" __global__ void matvec_f32(const float* __restrict__ A,
                                      const float* __restrict__ x,
                                      float* __restrict__ y,
                                      int rows,
                                      int cols)
{
    int r = blockIdx.x;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        s += A[(size_t)r * cols + c] * x[c];
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
        y[r] = part[0];
    }
}
