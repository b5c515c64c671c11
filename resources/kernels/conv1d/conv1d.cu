// conv1d: y[i] = sum over k of w[k] * x[i + k - ksize / 2], with zeros outside x.
//
// The output has the same length as the input ("same" padding), and the window is not
// flipped: this is the cross-correlation that deep-learning frameworks call convolution.
//
// Neighbouring outputs share almost all of their inputs: a block of 256 outputs needs only
// 256 + ksize - 1 distinct inputs, yet a naive kernel would load 256 * ksize of them. So the
// block first copies its input span (the "tile" plus a "halo" of ksize - 1 neighbours) and the
// weights into shared memory, once, and every thread then reads from there.

extern "C" __global__ void conv1d(const float* __restrict__ x,
                                  const float* __restrict__ w,
                                  float* __restrict__ y,
                                  int n,
                                  int ksize)
{
    // Dynamic shared memory, sized at launch (the spec's shared_bytes), because the span
    // depends on ksize: ksize weights, then blockDim.x + ksize - 1 inputs.
    extern __shared__ float smem[];
    float* w_s = smem;
    float* x_s = smem + ksize;

    int left = ksize / 2;                                    // how far the window reaches back
    int start = (int)(blockIdx.x * blockDim.x) - left;       // x index of x_s[0]; may be < 0
    int span = (int)blockDim.x + ksize - 1;

    // Strided loops, because the span and the kernel can both be larger than the block.
    for (int k = threadIdx.x; k < ksize; k += blockDim.x) {
        w_s[k] = w[k];
    }
    for (int j = threadIdx.x; j < span; j += blockDim.x) {
        int g = start + j;
        // Positions outside x are the zero padding: store 0 rather than reading outside x.
        x_s[j] = (g >= 0 && g < n) ? x[g] : 0.0f;
    }
    // Every thread's window spans values loaded by other threads.
    __syncthreads();

    // Only now may surplus threads of the last block leave: they had loading work to do above
    // and a barrier to reach.
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    // x_s[threadIdx.x + k] is x[i - left + k]. Within a warp all threads read the same w_s[k]
    // (a broadcast) and 32 consecutive x_s entries (32 different banks): no bank conflicts.
    float acc = 0.0f;
    for (int k = 0; k < ksize; ++k) {
        acc = fmaf(w_s[k], x_s[threadIdx.x + k], acc);
    }
    y[i] = acc;
}
