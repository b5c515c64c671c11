// Integer limits (INT_MAX, ...) for NVRTC. CCCL's definitions when they exist, so that a later
// cooperative_groups.h or CUB include defines nothing twice.
#ifndef KERNEL_STUDIO_LIMITS_H
#define KERNEL_STUDIO_LIMITS_H
#if __has_include(<cuda/std/climits>)
#include <cuda/std/climits>
#else
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MAX 32767
#define SHRT_MIN (-SHRT_MAX - 1)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-INT_MAX - 1)
#define UINT_MAX 4294967295U
#define LLONG_MAX 9223372036854775807LL
#define LLONG_MIN (-LLONG_MAX - 1)
#define ULLONG_MAX 18446744073709551615ULL
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-LONG_MAX - 1)
#define ULONG_MAX 18446744073709551615UL
#endif
#endif
