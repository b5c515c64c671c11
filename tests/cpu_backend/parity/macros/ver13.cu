// The CUDA version macro: NVRTC 13 takes the first branch.
extern "C" __global__ void ver13(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#if __CUDACC_VER_MAJOR__ >= 13
    c[i] = a[i] + b[i];
#else
    c[i] = a[i] - b[i];
#endif
}
