// A host compiler's macro: NVRTC does not define __GNUC__, so the GPU takes the #else branch.
extern "C" __global__ void gnuc(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#ifdef __GNUC__
    c[i] = a[i] - b[i];
#else
    c[i] = a[i] + b[i];
#endif
}
