// <cuda.h> for NVRTC, searched before the CUDA toolkit's own. The real header declares the
// driver API: host functions, which NVRTC refuses even as declarations. Device code needs only
// its version macro and the handle types.
#ifndef KERNEL_STUDIO_CUDA_H
#define KERNEL_STUDIO_CUDA_H
#ifndef CUDA_VERSION
#define CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#endif
typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
#endif
