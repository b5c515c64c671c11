// __CUDA_ARCH__ in device code: 900 on an H200 (sm_90).
extern "C" __global__ void arch(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    c[i] = a[i] + b[i];
#elif defined(__CUDA_ARCH__)
    c[i] = a[i] * b[i];
#else
    c[i] = 0.0f;
#endif
}
