// Layer normalisation over each row: y = (x - mean) / sqrt(var + eps) * gamma + beta.
//
// One block per row, like softmax. The mean and the variance are block-wide sums; the variance
// is computed in a second pass over the row, from x - mean, because the one-pass shortcut
// E[x^2] - E[x]^2 subtracts two large, nearly equal numbers and can lose every significant
// digit (or even go negative) when the row's mean is large compared to its spread.

constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    }
    return v;
}

// Sum over the whole block, returned to every thread. The final barrier lets the caller reuse
// `scratch` for the next sum without a slow warp still reading the old values.
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
extern "C" __global__ void layernorm(const float* __restrict__ x,
                                     const float* __restrict__ gamma,
                                     const float* __restrict__ beta,
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

    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        s += xr[j];
    }
    float mean = block_sum(s, scratch) / cols;

    float q = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float d = xr[j] - mean;
        q += d * d;
    }
    // Dividing by cols (not cols - 1) is the population variance, which is what layer norm in
    // the common frameworks uses. eps keeps a constant row from dividing by zero.
    float rstd = rsqrtf(block_sum(q, scratch) / cols + eps);

    // gamma and beta are shared by every row: after the first few rows they are served from
    // cache, so they cost almost nothing in DRAM traffic.
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
    }
}
