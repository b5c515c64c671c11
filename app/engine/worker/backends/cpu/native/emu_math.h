// CUDA's device math functions and integer/bit intrinsics for the CPU emulation.
//
// The C library already provides expf, sinf, fmaf, ... (math.h). This adds CUDA's own names.
// The "fast" intrinsics (__expf, __sinf, __fdividef, ...) follow the GPU's instruction
// sequences (see below); the rounding-mode intrinsics run under their mode; float->int
// intrinsics saturate as the GPU's conversions do.
#pragma once

#include <float.h>
#include <math.h>
#include <string.h>

#include <limits>

// min and max as in CUDA's math_functions.hpp: overloads for each type, plus mixed types with
// the usual arithmetic conversions.
#define KS_MINMAX(T)                                                                        \
    static inline T min(T a, T b) { return a < b ? a : b; }                                 \
    static inline T max(T a, T b) { return a > b ? a : b; }
KS_MINMAX(int)
KS_MINMAX(unsigned int)
KS_MINMAX(long)
KS_MINMAX(unsigned long)
KS_MINMAX(long long)
KS_MINMAX(unsigned long long)
KS_MINMAX(short)
KS_MINMAX(unsigned short)
KS_MINMAX(signed char)
KS_MINMAX(unsigned char)
#undef KS_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
template <class A, class B,
          class = typename std::enable_if<!std::is_same<A, B>::value && std::is_arithmetic<A>::value &&
                                          std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type min(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return min((C)a, (C)b);
}
template <class A, class B,
          class = typename std::enable_if<!std::is_same<A, B>::value && std::is_arithmetic<A>::value &&
                                          std::is_arithmetic<B>::value>::type>
static inline typename std::common_type<A, B>::type max(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return max((C)a, (C)b);
}

// Floating point.
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float sinpif(float x) { return sinf((float)M_PI * x); }
static inline float cospif(float x) { return cosf((float)M_PI * x); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline double cospi(double x) { return cos(M_PI * x); }
static inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
static inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
static inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
static inline float norm4df(float a, float b, float c, float d) {
    return sqrtf(a * a + b * b + c * c + d * d);
}
static inline float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
static inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
static inline double rhypot(double a, double b) { return 1.0 / hypot(a, b); }
static inline float normcdff(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline float __saturatef(float x) { return x != x ? 0.0f : fminf(fmaxf(x, 0.0f), 1.0f); }
static inline float saturate(float x) { return __saturatef(x); }
// The approximate intrinsics compute what the GPU's instruction sequence computes, so that
// their dominant errors (and documented special cases) show here too: the argument scaled in
// float before ex2/lg2/sin/cos, division as a multiply by an approximate reciprocal that is 0
// for |y| > 2^126. The last-bit error of the hardware approximation itself is not reproduced.
static inline float ks_rcp_approx(float y) {
    float r = 1.0f / y;
    return fabsf(r) < FLT_MIN ? copysignf(0.0f, r) : r;  // rcp.approx flushes its denormals
}
static inline float __fdividef(float a, float b) { return a * ks_rcp_approx(b); }
static inline float fdividef(float a, float b) { return a / b; }
// Denormals, as measured on an H200 (parity corpus): sin.approx and cos.approx flush denormal
// arguments and results to zeros of the same sign; ex2.approx and lg2.approx keep them
// (__logf of a denormal is its logarithm, __expf gives denormal results).
static inline float ks_ftz(float v) { return fabsf(v) < FLT_MIN ? copysignf(0.0f, v) : v; }
// ex2.approx's denormal results are not the exact ones (an H200 was off by more than eight
// denormal steps on some), and the emulation cannot reproduce its approximation: refused.
static inline float ks_fast_exp2(float x) {
    float r = exp2f(x);
    if (r != 0.0f && fabsf(r) < FLT_MIN)
        ks_stop(3, "not supported by the CPU backend: a fast exponential (__expf, __exp10f, "
                   "__powf) with a denormal result (below 2^-126; the GPU's approximation "
                   "there is not the exact value the CPU computes)");
    return r;
}
static inline float ks_fast_log2(float x) { return log2f(x); }
// sin.approx / cos.approx: the argument is multiplied by 1/(2 pi) in float, then the hardware
// takes sin/cos of that many turns; large arguments lose their precision in that product.
static inline float ks_fast_sin(float x) {
    float turns = ks_ftz(x) * 0.159154943f;
    return isinf(x) ? NAN : ks_ftz((float)sin(6.283185307179586 * (double)turns));
}
static inline float ks_fast_cos(float x) {
    float turns = ks_ftz(x) * 0.159154943f;
    return isinf(x) ? NAN : ks_ftz((float)cos(6.283185307179586 * (double)turns));
}
static inline float ks_fast_expf(float x) { return ks_fast_exp2(x * 1.44269504f); }
static inline float ks_fast_exp10f(float x) { return ks_fast_exp2(x * 3.32192809f); }
static inline float ks_fast_logf(float x) { return ks_fast_log2(x) * 0.693147181f; }
static inline float ks_fast_log10f(float x) { return ks_fast_log2(x) * 0.301029996f; }
static inline float ks_fast_tanf(float x) { return __fdividef(ks_fast_sin(x), ks_fast_cos(x)); }
static inline void ks_fast_sincosf(float x, float* s, float* c) {
    *s = ks_fast_sin(x);
    *c = ks_fast_cos(x);
}
static inline float ks_fast_powf(float a, float b) { return ks_fast_exp2(b * ks_fast_log2(a)); }
// glibc already declares __expf, __logf, ... (as aliases of its own functions), so CUDA's names
// are macros.
#define __expf(x) ks_fast_expf(x)
#define __exp10f(x) ks_fast_exp10f(x)
#define __logf(x) ks_fast_logf(x)
#define __log2f(x) ks_fast_log2(x)
#define __log10f(x) ks_fast_log10f(x)
#define __sinf(x) ks_fast_sin(x)
#define __cosf(x) ks_fast_cos(x)
#define __tanf(x) ks_fast_tanf(x)
#define __sincosf(x, s, c) ks_fast_sincosf(x, s, c)
#define __powf(a, b) ks_fast_powf(a, b)

// Rounding modes: the operation runs under the named mode (the fibers keep their own MXCSR;
// -frounding-math keeps the operation between the mode switches).
#include <fenv.h>
#define KS_ROUNDED(T, NAME, MODE, PARAMS, EXPR)                                               \
    static inline T NAME PARAMS {                                                           \
        int saved = fegetround();                                                           \
        fesetround(MODE);                                                                   \
        volatile T r = (EXPR);                                                              \
        fesetround(saved);                                                                  \
        return r;                                                                           \
    }
#define KS_ROUNDED_FAMILY(T, STEM, PARAMS, EXPR)                                              \
    KS_ROUNDED(T, STEM##_rn, FE_TONEAREST, PARAMS, EXPR)                                     \
    KS_ROUNDED(T, STEM##_rz, FE_TOWARDZERO, PARAMS, EXPR)                                    \
    KS_ROUNDED(T, STEM##_ru, FE_UPWARD, PARAMS, EXPR)                                        \
    KS_ROUNDED(T, STEM##_rd, FE_DOWNWARD, PARAMS, EXPR)
KS_ROUNDED_FAMILY(float, __fadd, (float a, float b), a + b)
KS_ROUNDED_FAMILY(float, __fsub, (float a, float b), a - b)
KS_ROUNDED_FAMILY(float, __fmul, (float a, float b), a * b)
KS_ROUNDED_FAMILY(float, __fdiv, (float a, float b), a / b)
KS_ROUNDED_FAMILY(float, __frcp, (float a), 1.0f / a)
KS_ROUNDED_FAMILY(float, __fsqrt, (float a), sqrtf(a))
KS_ROUNDED_FAMILY(float, __fmaf, (float a, float b, float c), fmaf(a, b, c))
KS_ROUNDED_FAMILY(double, __dadd, (double a, double b), a + b)
KS_ROUNDED_FAMILY(double, __dsub, (double a, double b), a - b)
KS_ROUNDED_FAMILY(double, __dmul, (double a, double b), a * b)
KS_ROUNDED_FAMILY(double, __ddiv, (double a, double b), a / b)
KS_ROUNDED_FAMILY(double, __drcp, (double a), 1.0 / a)
KS_ROUNDED_FAMILY(double, __dsqrt, (double a), sqrt(a))
KS_ROUNDED_FAMILY(double, __fma, (double a, double b, double c), fma(a, b, c))
#undef KS_ROUNDED_FAMILY
// __frsqrt_rn: 1/sqrt(x) rounded once (the double result is far more precise than a float).
static inline float __frsqrt_rn(float x) { return (float)(1.0 / sqrt((double)x)); }
static inline float __fadd_ieee(float a, float b) { return a + b; }
KS_ROUNDED(float, __double2float_rn, FE_TONEAREST, (double x), (float)x)
KS_ROUNDED(float, __double2float_rz, FE_TOWARDZERO, (double x), (float)x)
KS_ROUNDED(float, __double2float_ru, FE_UPWARD, (double x), (float)x)
KS_ROUNDED(float, __double2float_rd, FE_DOWNWARD, (double x), (float)x)
#define KS_TO_FLOAT(FROM, STEM, T)                                                            \
    KS_ROUNDED(T, STEM##_rn, FE_TONEAREST, (FROM x), (T)x)                                   \
    KS_ROUNDED(T, STEM##_rz, FE_TOWARDZERO, (FROM x), (T)x)                                  \
    KS_ROUNDED(T, STEM##_ru, FE_UPWARD, (FROM x), (T)x)                                      \
    KS_ROUNDED(T, STEM##_rd, FE_DOWNWARD, (FROM x), (T)x)
KS_TO_FLOAT(int, __int2float, float)
KS_TO_FLOAT(unsigned int, __uint2float, float)
KS_TO_FLOAT(long long, __ll2float, float)
KS_TO_FLOAT(unsigned long long, __ull2float, float)
KS_TO_FLOAT(long long, __ll2double, double)
KS_TO_FLOAT(unsigned long long, __ull2double, double)
#undef KS_TO_FLOAT
#undef KS_ROUNDED
static inline double __int2double_rn(int x) { return (double)x; }
static inline double __uint2double_rn(unsigned int x) { return (double)x; }

// Float -> integer conversions saturate on a GPU: out-of-range values give the nearest limit and
// NaN gives 0 (cvt.*i with a float source), except for 64-bit results, where NaN gives
// 0x8000000000000000 for signed and unsigned alike (measured on an H200: parity corpus).
// `rounded` is the value already rounded to a whole number by the mode in the name.
template <class I> static inline I ks_saturate(double rounded) {
    if (rounded != rounded) return 0;
    const double lo = (double)std::numeric_limits<I>::min();
    const double hi = (double)std::numeric_limits<I>::max();  // may round up to 2^N
    if (rounded <= lo) return std::numeric_limits<I>::min();
    if (rounded >= hi) return std::numeric_limits<I>::max();
    return (I)rounded;
}
template <class I> static inline I ks_saturate_long(long double rounded) {
    if (rounded != rounded) return (I)0x8000000000000000ULL;
    if (rounded <= (long double)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
    if (rounded >= (long double)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
    return (I)rounded;
}
#define KS_TO_INT(FROM, STEM, I, SAT)                                                        \
    static inline I STEM##_rn(FROM x) { return SAT<I>(nearbyint(x)); }                       \
    static inline I STEM##_rz(FROM x) { return SAT<I>(trunc(x)); }                           \
    static inline I STEM##_rd(FROM x) { return SAT<I>(floor(x)); }                           \
    static inline I STEM##_ru(FROM x) { return SAT<I>(ceil(x)); }
KS_TO_INT(float, __float2int, int, ks_saturate)
KS_TO_INT(float, __float2uint, unsigned int, ks_saturate)
KS_TO_INT(float, __float2ll, long long, ks_saturate_long)
KS_TO_INT(float, __float2ull, unsigned long long, ks_saturate_long)
KS_TO_INT(double, __double2int, int, ks_saturate)
KS_TO_INT(double, __double2uint, unsigned int, ks_saturate)
KS_TO_INT(double, __double2ll, long long, ks_saturate_long)
KS_TO_INT(double, __double2ull, unsigned long long, ks_saturate_long)
#undef KS_TO_INT

// Reinterpretation.
template <class To, class From> static inline To ks_bit_cast(From v) {
    To r;
    memcpy(&r, &v, sizeof(To));
    return r;
}
static inline int __float_as_int(float x) { return ks_bit_cast<int>(x); }
static inline unsigned int __float_as_uint(float x) { return ks_bit_cast<unsigned int>(x); }
static inline float __int_as_float(int x) { return ks_bit_cast<float>(x); }
static inline float __uint_as_float(unsigned int x) { return ks_bit_cast<float>(x); }
static inline long long __double_as_longlong(double x) { return ks_bit_cast<long long>(x); }
static inline double __longlong_as_double(long long x) { return ks_bit_cast<double>(x); }
static inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
static inline int __double2loint(double x) { return (int)__double_as_longlong(x); }
static inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned int)hi << 32) |
                                            (unsigned int)lo));
}

// Integer and bit intrinsics.
static inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
static inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    unsigned long long both = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) {
        unsigned int sel = (s >> (4 * i)) & 7u;
        r |= (unsigned int)((both >> (8 * sel)) & 0xffu) << (8 * i);
    }
    return r;
}
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)((both << (s & 31)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)((both << (s > 32 ? 32 : s)) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)(both >> (s & 31));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long both = ((unsigned long long)hi << 32) | lo;
    return (unsigned int)(both >> (s > 32 ? 32 : s));
}
static inline int __mul24(int a, int b) {
    return (int)((long long)((a << 8) >> 8) * (long long)((b << 8) >> 8));
}
static inline unsigned int __umul24(unsigned int a, unsigned int b) {
    return (a & 0xffffffu) * (b & 0xffffffu);
}
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
static inline long long __mul64hi(long long a, long long b) {
    return (long long)(((__int128)a * b) >> 64);
}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a + b) >> 1);
}
static inline unsigned int __urhadd(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a + b + 1) >> 1);
}
static inline unsigned int __sad(int a, int b, unsigned int c) {
    return c + (unsigned int)(a > b ? (long long)a - b : (long long)b - a);
}
static inline unsigned int __usad(unsigned int a, unsigned int b, unsigned int c) {
    return c + (a > b ? a - b : b - a);
}
