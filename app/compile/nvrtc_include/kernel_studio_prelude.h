// Pre-included by Kernel Studio into every NVRTC compile: what nvcc makes visible without any
// #include (it pre-includes cuda_runtime.h, which brings the host's math.h and limits.h).
// Quoted includes: these siblings, never a header of the same name in the kernel's folder.
#ifndef KERNEL_STUDIO_PRELUDE_H
#define KERNEL_STUDIO_PRELUDE_H
#include "stddef.h"
#include "limits.h"
#include "stdint.h"
#include "math.h"
#include "stdlib.h"
#endif
