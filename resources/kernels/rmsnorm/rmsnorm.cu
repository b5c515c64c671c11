// RMS normalisation over each row: y = x / sqrt(mean(x^2) + eps) * w.
//
// The normalisation used by most recent language models: like layer norm without the mean
// subtraction and the shift, so one block-wide sum per row instead of two.

constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    }
    return v;
}

// Sum over the whole block, returned to every thread.
__device__ float block_sum(float v, float* scratch)
{
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    v = warp_sum(lane < (int)(blockDim.x / 32) ? scratch[lane] : 0.0f);
    __syncthreads();
    return v;
}

// Launch with one block per row and a block size that is a multiple of 32.
extern "C" __global__ void rmsnorm(const float* __restrict__ x,
                                   const float* __restrict__ w,
                                   float* __restrict__ y,
                                   int rows,
                                   int cols,
                                   float eps)
{
    __shared__ float scratch[32];
    int row = blockIdx.x;
    if (row >= rows) {
        return;
    }
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;

    float q = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        q = fmaf(xr[j], xr[j], q);
    }
    // rsqrtf is one hardware instruction; 1.0f / sqrtf() would be two and no more useful at
    // the accuracy a normalisation needs.
    float scale = rsqrtf(block_sum(q, scratch) / cols + eps);

    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        yr[j] = xr[j] * scale * w[j];
    }
}
