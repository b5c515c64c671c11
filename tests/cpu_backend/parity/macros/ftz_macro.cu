// __CUDA_FTZ follows --ftz: 0 by default.
extern "C" __global__ void ftz_macro(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if __CUDA_FTZ
    c[i] = a[i] - b[i];
#else
    c[i] = a[i] + b[i];
#endif
}
