// <string.h> for NVRTC: memcpy and memset are NVRTC built-ins; this adds their std:: names.
#ifndef KERNEL_STUDIO_STRING_H
#define KERNEL_STUDIO_STRING_H
#include "stddef.h"
namespace std {
using ::memcpy; using ::memset;
}
#endif
