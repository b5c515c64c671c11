// <stdio.h> for NVRTC: device printf is an NVRTC built-in; this adds std::printf.
#ifndef KERNEL_STUDIO_STDIO_H
#define KERNEL_STUDIO_STDIO_H
#include "stddef.h"
namespace std {
using ::printf;
}
#endif
