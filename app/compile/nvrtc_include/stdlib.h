// <stdlib.h> for NVRTC: abs, malloc and free are NVRTC built-ins (device heap); this adds the
// std:: names and the exit-status macros.
#ifndef KERNEL_STUDIO_STDLIB_H
#define KERNEL_STUDIO_STDLIB_H
#include "stddef.h"
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
namespace std {
using ::abs; using ::labs; using ::llabs; using ::malloc; using ::free;
}
#endif
