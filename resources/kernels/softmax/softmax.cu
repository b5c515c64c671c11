// softmax over each row: y[r, j] = exp(x[r, j] - max_r) / sum_j exp(x[r, j] - max_r).
//
// One block per row. Each thread strides over the row, so any number of columns works with a
// fixed block size; two block-wide reductions (a max, then a sum) give every thread the two
// numbers it needs.

constexpr unsigned FULL_MASK = 0xffffffffu;
// The most negative finite float. Starting a max from it instead of -infinity keeps the kernel
// free of headers (INFINITY lives in math.h, which NVRTC does not provide by default).
constexpr float LOWEST = -3.402823466e38f;

// Butterfly (xor) shuffles leave the result in every lane, not just lane 0, so no extra
// broadcast is needed afterwards.
__device__ float warp_max(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, offset));
    }
    return v;
}

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    }
    return v;
}

// Block-wide reductions whose result reaches every thread. Each warp reduces its own values,
// parks the result in `scratch`, and then every warp re-reduces the parked values: redundant
// work for 32 numbers, but it saves a second round trip through shared memory.
// The closing barrier matters: the next reduction reuses `scratch`, and a fast warp must not
// overwrite a slot that a slow warp has not read yet.
__device__ float block_max(float v, float* scratch)
{
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    v = warp_max(v);
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    v = warp_max(lane < (int)(blockDim.x / 32) ? scratch[lane] : LOWEST);
    __syncthreads();
    return v;
}

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
extern "C" __global__ void softmax(const float* __restrict__ x,
                                   float* __restrict__ y,
                                   int rows,
                                   int cols)
{
    __shared__ float scratch[32];
    int row = blockIdx.x;
    if (row >= rows) {
        return;  // the whole block leaves together, so no barrier is left waiting
    }
    // 64-bit offsets: rows * cols can pass 2^31 on a large batch even when each fits in int.
    const float* xr = x + (size_t)row * cols;
    float* yr = y + (size_t)row * cols;

    // Subtracting the row's maximum changes nothing mathematically (it cancels between the
    // numerator and the denominator) but keeps every exp() argument <= 0, so exp() cannot
    // overflow to infinity on large inputs. This is what "numerically stable" means here.
    float m = LOWEST;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        m = fmaxf(m, xr[j]);
    }
    m = block_max(m, scratch);

    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        s += expf(xr[j] - m);
    }
    s = block_sum(s, scratch);

    // The row is read a third time rather than keeping exp() values around: for rows of a few
    // thousand floats the re-reads come from cache, and registers stay free.
    float inv = 1.0f / s;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        yr[j] = expf(xr[j] - m) * inv;
    }
}
