// Kernels for test_predefined_macros.py.
extern "C" __global__ void version(int* out) {
#if __CUDACC_VER_MAJOR__ < 13
    out[0] = -1;
#else
    out[0] = __CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__;
#endif
    out[1] = __CUDA_ARCH__;
#ifdef __NVCC__
    out[2] = 1;  // nvcc's macro: NVRTC does not define it
#else
    out[2] = 0;
#endif
}
