// <math.h> for NVRTC: the C macros (INFINITY, NAN, HUGE_VALF, M_PI, ...) and the std:: names of
// the math functions NVRTC already has in the global namespace (float overloads included).
#ifndef KERNEL_STUDIO_MATH_H
#define KERNEL_STUDIO_MATH_H
// Constant expressions, as glibc's are (NVRTC has no __builtin_huge_valf). CCCL's
// <cuda/std/cmath>, which CUB includes, spells INFINITY and NAN its own way; the compile step
// drops the resulting "incompatible redefinition" warning (both mean the same float).
#ifndef INFINITY
#define INFINITY (__builtin_bit_cast(float, 0x7f800000u))
#endif
#ifndef NAN
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
#endif
#define HUGE_VALF (__builtin_bit_cast(float, 0x7f800000u))
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ull))
#define HUGE_VALL HUGE_VAL
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
typedef float float_t;
typedef double double_t;

namespace std {
using ::float_t; using ::double_t;
// Each name with its float-suffixed twin; NVRTC declares both, with float overloads.
#define KERNEL_STUDIO_STD_MATH(name) using ::name; using ::name##f;
KERNEL_STUDIO_STD_MATH(fabs) KERNEL_STUDIO_STD_MATH(fmod) KERNEL_STUDIO_STD_MATH(remainder)
KERNEL_STUDIO_STD_MATH(remquo) KERNEL_STUDIO_STD_MATH(fma) KERNEL_STUDIO_STD_MATH(fmax)
KERNEL_STUDIO_STD_MATH(fmin) KERNEL_STUDIO_STD_MATH(fdim) KERNEL_STUDIO_STD_MATH(nan)
KERNEL_STUDIO_STD_MATH(exp) KERNEL_STUDIO_STD_MATH(exp2) KERNEL_STUDIO_STD_MATH(expm1)
KERNEL_STUDIO_STD_MATH(log) KERNEL_STUDIO_STD_MATH(log10) KERNEL_STUDIO_STD_MATH(log2)
KERNEL_STUDIO_STD_MATH(log1p) KERNEL_STUDIO_STD_MATH(pow) KERNEL_STUDIO_STD_MATH(sqrt)
KERNEL_STUDIO_STD_MATH(cbrt) KERNEL_STUDIO_STD_MATH(hypot) KERNEL_STUDIO_STD_MATH(sin)
KERNEL_STUDIO_STD_MATH(cos) KERNEL_STUDIO_STD_MATH(tan) KERNEL_STUDIO_STD_MATH(asin)
KERNEL_STUDIO_STD_MATH(acos) KERNEL_STUDIO_STD_MATH(atan) KERNEL_STUDIO_STD_MATH(atan2)
KERNEL_STUDIO_STD_MATH(sinh) KERNEL_STUDIO_STD_MATH(cosh) KERNEL_STUDIO_STD_MATH(tanh)
KERNEL_STUDIO_STD_MATH(asinh) KERNEL_STUDIO_STD_MATH(acosh) KERNEL_STUDIO_STD_MATH(atanh)
KERNEL_STUDIO_STD_MATH(erf) KERNEL_STUDIO_STD_MATH(erfc) KERNEL_STUDIO_STD_MATH(tgamma)
KERNEL_STUDIO_STD_MATH(lgamma) KERNEL_STUDIO_STD_MATH(ceil) KERNEL_STUDIO_STD_MATH(floor)
KERNEL_STUDIO_STD_MATH(trunc) KERNEL_STUDIO_STD_MATH(round) KERNEL_STUDIO_STD_MATH(lround)
KERNEL_STUDIO_STD_MATH(llround) KERNEL_STUDIO_STD_MATH(nearbyint) KERNEL_STUDIO_STD_MATH(rint)
KERNEL_STUDIO_STD_MATH(lrint) KERNEL_STUDIO_STD_MATH(llrint) KERNEL_STUDIO_STD_MATH(frexp)
KERNEL_STUDIO_STD_MATH(ldexp) KERNEL_STUDIO_STD_MATH(modf) KERNEL_STUDIO_STD_MATH(scalbn)
KERNEL_STUDIO_STD_MATH(scalbln) KERNEL_STUDIO_STD_MATH(ilogb) KERNEL_STUDIO_STD_MATH(logb)
KERNEL_STUDIO_STD_MATH(nextafter) KERNEL_STUDIO_STD_MATH(copysign)
#undef KERNEL_STUDIO_STD_MATH
using ::abs; using ::isfinite; using ::isinf; using ::isnan; using ::signbit;
}
#endif
