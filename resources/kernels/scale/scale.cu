// scale: y = alpha * x, a template over the element type T and the width W (the elements each
// thread scales); the spec builds scale<float, 4>.
//
// A template kernel is not a kernel until it is instantiated: the spec's entry names the
// instance, and Kernel Studio asks the compiler for exactly that one (NVRTC's name
// expressions; for nvcc a line that takes its address), then loads it by its lowered name.
// The grid in the spec divides by W too, so the two must agree.

template <typename T, int W>
__global__ void scale(const T* __restrict__ x, T* __restrict__ y, T alpha, int n)
{
    // Thread t owns elements [t * W, t * W + W): W independent loads in flight per thread,
    // and a warp still reads one contiguous stretch of 32 * W elements.
    int first = (blockIdx.x * blockDim.x + threadIdx.x) * W;
    #pragma unroll
    for (int k = 0; k < W; ++k) {
        int i = first + k;
        if (i < n) {
            y[i] = alpha * x[i];
        }
    }
}
