// __half and __nv_bfloat16 for the CPU emulation: storage types with correctly rounded
// conversions (round to nearest even, canonical NaN 0x7fff as on the GPU) and arithmetic that
// computes in float and rounds once, which for + - * / gives the same result as the GPU's
// native half instructions. Conversions follow CUDA's cuda_fp16.hpp: a constructor from float
// and an implicit conversion to float, so mixed expressions are as ambiguous as under nvcc.
#pragma once

#include <string.h>

static inline unsigned short ks_f2h_bits(float f) {
    unsigned int x;
    memcpy(&x, &f, 4);
    unsigned int sign = (x >> 16) & 0x8000u;
    unsigned int a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return 0x7fffu;               // NaN
    if (a >= 0x47800000u) return sign | 0x7c00u;        // too large (or inf): inf
    if (a < 0x38800000u) {                              // half subnormal or zero
        int shift = 126 - (int)(a >> 23);
        if (shift > 24) return sign;
        unsigned int m = (a & 0x7fffffu) | 0x800000u;
        unsigned int q = m >> shift, rem = m & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
        return (unsigned short)(sign | q);
    }
    unsigned int q = (a - 0x38000000u) >> 13, rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ++q;
    return (unsigned short)(sign | (q >= 0x7c00u ? 0x7c00u : q));
}

static inline unsigned short ks_f2h_bits_rz(float f) {
    unsigned int x;
    memcpy(&x, &f, 4);
    unsigned int sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return 0x7fffu;
    if (a == 0x7f800000u) return sign | 0x7c00u;
    if (a >= 0x477ff000u) return sign | 0x7bffu;        // truncates to the largest finite half
    if (a < 0x38800000u) {
        int shift = 126 - (int)(a >> 23);
        return shift > 24 ? sign : (unsigned short)(sign | (((a & 0x7fffffu) | 0x800000u) >> shift));
    }
    return (unsigned short)(sign | ((a - 0x38000000u) >> 13));
}

static inline float ks_h2f(unsigned short h) {
    unsigned int sign = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    unsigned int bits;
    if (e == 0) {
        float v = (float)m * 5.9604644775390625e-8f;    // m * 2^-24, exact
        return sign ? -v : v;
    }
    bits = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112u) << 23) | (m << 13);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline unsigned short ks_f2bf_bits(float f) {
    unsigned int x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
    return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static inline float ks_bf2f(unsigned short b) {
    unsigned int bits = (unsigned int)b << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

struct __half_raw { unsigned short x; };
struct __nv_bfloat16_raw { unsigned short x; };

// One 16-bit float type; Tag tells half from bfloat16 apart.
#define KS_DEFINE_HALF(NAME, RAW, TO_BITS, TO_FLOAT)                                        \
    struct NAME {                                                                          \
        unsigned short __x;                                                                \
        NAME() = default;                                                                  \
        constexpr NAME(const RAW& r) : __x(r.x) {}                                         \
        NAME(float f) : __x(TO_BITS(f)) {}                                                 \
        NAME(double f) : __x(TO_BITS((float)f)) {}                                         \
        NAME(int v) : __x(TO_BITS((float)v)) {}                                            \
        NAME(unsigned int v) : __x(TO_BITS((float)v)) {}                                   \
        NAME(long long v) : __x(TO_BITS((float)v)) {}                                      \
        NAME(unsigned long long v) : __x(TO_BITS((float)v)) {}                             \
        NAME(long v) : __x(TO_BITS((float)v)) {}                                           \
        NAME(unsigned long v) : __x(TO_BITS((float)v)) {}                                  \
        NAME(short v) : __x(TO_BITS((float)v)) {}                                          \
        NAME(unsigned short v) : __x(TO_BITS((float)v)) {}                                 \
        operator float() const { return TO_FLOAT(__x); }                                   \
        operator RAW() const { RAW r; r.x = __x; return r; }                               \
        NAME& operator=(const RAW& r) { __x = r.x; return *this; }                         \
    };                                                                                     \
    static inline NAME operator+(const NAME& a, const NAME& b) { return NAME((float)a + (float)b); } \
    static inline NAME operator-(const NAME& a, const NAME& b) { return NAME((float)a - (float)b); } \
    static inline NAME operator*(const NAME& a, const NAME& b) { return NAME((float)a * (float)b); } \
    static inline NAME operator/(const NAME& a, const NAME& b) { return NAME((float)a / (float)b); } \
    static inline NAME operator-(const NAME& a) { NAME r = a; r.__x ^= 0x8000u; return r; } \
    static inline NAME operator+(const NAME& a) { return a; }                              \
    static inline NAME& operator+=(NAME& a, const NAME& b) { return a = a + b; }           \
    static inline NAME& operator-=(NAME& a, const NAME& b) { return a = a - b; }           \
    static inline NAME& operator*=(NAME& a, const NAME& b) { return a = a * b; }           \
    static inline NAME& operator/=(NAME& a, const NAME& b) { return a = a / b; }           \
    static inline NAME& operator++(NAME& a) { return a = a + NAME(1.0f); }                 \
    static inline NAME& operator--(NAME& a) { return a = a - NAME(1.0f); }                 \
    static inline NAME operator++(NAME& a, int) { NAME o = a; ++a; return o; }             \
    static inline NAME operator--(NAME& a, int) { NAME o = a; --a; return o; }             \
    static inline bool operator==(const NAME& a, const NAME& b) { return (float)a == (float)b; } \
    static inline bool operator!=(const NAME& a, const NAME& b) { return (float)a != (float)b; } \
    static inline bool operator<(const NAME& a, const NAME& b) { return (float)a < (float)b; } \
    static inline bool operator>(const NAME& a, const NAME& b) { return (float)a > (float)b; } \
    static inline bool operator<=(const NAME& a, const NAME& b) { return (float)a <= (float)b; } \
    static inline bool operator>=(const NAME& a, const NAME& b) { return (float)a >= (float)b; }

KS_DEFINE_HALF(__half, __half_raw, ks_f2h_bits, ks_h2f)
KS_DEFINE_HALF(__nv_bfloat16, __nv_bfloat16_raw, ks_f2bf_bits, ks_bf2f)
#undef KS_DEFINE_HALF

typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;

// Pairs (half2, bfloat162) with elementwise arithmetic.
#define KS_DEFINE_PAIR(NAME, ELEM)                                                          \
    struct alignas(4) NAME {                                                               \
        ELEM x, y;                                                                         \
        NAME() = default;                                                                  \
        constexpr NAME(const ELEM& a, const ELEM& b) : x(a), y(b) {}                       \
    };                                                                                     \
    static inline NAME operator+(const NAME& a, const NAME& b) { return NAME(a.x + b.x, a.y + b.y); } \
    static inline NAME operator-(const NAME& a, const NAME& b) { return NAME(a.x - b.x, a.y - b.y); } \
    static inline NAME operator*(const NAME& a, const NAME& b) { return NAME(a.x * b.x, a.y * b.y); } \
    static inline NAME operator/(const NAME& a, const NAME& b) { return NAME(a.x / b.x, a.y / b.y); } \
    static inline NAME operator-(const NAME& a) { return NAME(-a.x, -a.y); }              \
    static inline NAME& operator+=(NAME& a, const NAME& b) { return a = a + b; }           \
    static inline NAME& operator-=(NAME& a, const NAME& b) { return a = a - b; }           \
    static inline NAME& operator*=(NAME& a, const NAME& b) { return a = a * b; }           \
    static inline NAME& operator/=(NAME& a, const NAME& b) { return a = a / b; }           \
    static inline bool operator==(const NAME& a, const NAME& b) { return a.x == b.x && a.y == b.y; } \
    static inline bool operator!=(const NAME& a, const NAME& b) { return !(a == b); }

KS_DEFINE_PAIR(__half2, __half)
KS_DEFINE_PAIR(__nv_bfloat162, __nv_bfloat16)
#undef KS_DEFINE_PAIR

typedef __half2 half2;
typedef __nv_bfloat162 nv_bfloat162;

// Conversions.
static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __float2half_rz(float f) { __half_raw r; r.x = ks_f2h_bits_rz(f); return __half(r); }
static inline __half __double2half(double f) { return __half(f); }
static inline float __half2float(__half h) { return (float)h; }
static inline __half __int2half_rn(int v) { return __half(v); }
static inline __half __uint2half_rn(unsigned int v) { return __half(v); }
// A half holds at most 65504, so only infinities and NaN need the GPU's saturation (NaN -> 0).
static inline int ks_half_whole(float v) {
    return v != v ? 0 : v >= 2147483647.0f ? 2147483647 : v <= -2147483648.0f ? (-2147483647 - 1)
                                                                            : (int)v;
}
static inline int __half2int_rn(__half h) { return ks_half_whole(__builtin_rintf((float)h)); }
static inline int __half2int_rz(__half h) { return ks_half_whole(__builtin_truncf((float)h)); }
static inline int __half2int_rd(__half h) { return ks_half_whole(__builtin_floorf((float)h)); }
static inline int __half2int_ru(__half h) { return ks_half_whole(__builtin_ceilf((float)h)); }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __ushort_as_half(unsigned short v) { __half_raw r; r.x = v; return __half(r); }
static inline __half __short_as_half(short v) { return __ushort_as_half((unsigned short)v); }
static inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static inline __half2 __half2half2(__half a) { return __half2(a, a); }
static inline float2 __half22float2(__half2 h) { return make_float2((float)h.x, (float)h.y); }
static inline __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline float __low2float(__half2 h) { return (float)h.x; }
static inline float __high2float(__half2 h) { return (float)h.y; }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }

static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __double2bfloat16(double f) { return __nv_bfloat16(f); }
static inline float __bfloat162float(__nv_bfloat16 b) { return (float)b; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short v) {
    __nv_bfloat16_raw r; r.x = v; return __nv_bfloat16(r);
}
static inline __nv_bfloat162 __float2bfloat162_rn(float f) {
    return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f));
}
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
    return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b));
}
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) {
    return __nv_bfloat162(a, b);
}
static inline float2 __bfloat1622float2(__nv_bfloat162 b) {
    return make_float2((float)b.x, (float)b.y);
}
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 b) { return b.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 b) { return b.y; }

// Arithmetic and comparison functions, for both 16-bit types (CUDA overloads the names).
#define KS_HALF_FUNCTIONS(T, T2)                                                           \
    static inline T __hadd(T a, T b) { return a + b; }                                     \
    static inline T __hsub(T a, T b) { return a - b; }                                     \
    static inline T __hmul(T a, T b) { return a * b; }                                     \
    static inline T __hdiv(T a, T b) { return a / b; }                                     \
    static inline T __hneg(T a) { return -a; }                                             \
    static inline T __habs(T a) { T r = a; r.__x &= 0x7fffu; return r; }                  \
    static inline T __hfma(T a, T b, T c) {                                                \
        return T((float)((double)(float)a * (double)(float)b + (double)(float)c));         \
    }                                                                                      \
    static inline T __hmax(T a, T b) { return (float)a >= (float)b || b != b ? a : b; }    \
    static inline T __hmin(T a, T b) { return (float)a <= (float)b || b != b ? a : b; }    \
    static inline bool __heq(T a, T b) { return a == b; }                                  \
    static inline bool __hne(T a, T b) { return a != b; }                                  \
    static inline bool __hlt(T a, T b) { return a < b; }                                   \
    static inline bool __hle(T a, T b) { return a <= b; }                                  \
    static inline bool __hgt(T a, T b) { return a > b; }                                   \
    static inline bool __hge(T a, T b) { return a >= b; }                                  \
    static inline bool __hisnan(T a) { return (a.__x & 0x7fffu) > (T(__builtin_inff()).__x & 0x7fffu); } \
    static inline int __hisinf(T a) {                                                      \
        return (a.__x & 0x7fffu) == (T(__builtin_inff()).__x & 0x7fffu) ? (a.__x & 0x8000u ? -1 : 1) : 0; \
    }                                                                                      \
    static inline T hexp(T a) { return T(__builtin_expf((float)a)); }                      \
    static inline T hexp2(T a) { return T(__builtin_exp2f((float)a)); }                    \
    static inline T hlog(T a) { return T(__builtin_logf((float)a)); }                      \
    static inline T hlog2(T a) { return T(__builtin_log2f((float)a)); }                    \
    static inline T hsqrt(T a) { return T(__builtin_sqrtf((float)a)); }                    \
    static inline T hrsqrt(T a) { return T(1.0f / __builtin_sqrtf((float)a)); }            \
    static inline T hrcp(T a) { return T(1.0f / (float)a); }                               \
    static inline T hsin(T a) { return T(__builtin_sinf((float)a)); }                      \
    static inline T hcos(T a) { return T(__builtin_cosf((float)a)); }                      \
    static inline T htanh(T a) { return T(__builtin_tanhf((float)a)); }                    \
    static inline T hfloor(T a) { return T(__builtin_floorf((float)a)); }                  \
    static inline T hceil(T a) { return T(__builtin_ceilf((float)a)); }                    \
    static inline T htrunc(T a) { return T(__builtin_truncf((float)a)); }                  \
    static inline T hrint(T a) { return T(__builtin_rintf((float)a)); }                    \
    static inline T2 __hadd2(T2 a, T2 b) { return a + b; }                                 \
    static inline T2 __hsub2(T2 a, T2 b) { return a - b; }                                 \
    static inline T2 __hmul2(T2 a, T2 b) { return a * b; }                                 \
    static inline T2 __h2div(T2 a, T2 b) { return a / b; }                                 \
    static inline T2 __hneg2(T2 a) { return -a; }                                          \
    static inline T2 __habs2(T2 a) { return T2(__habs(a.x), __habs(a.y)); }               \
    static inline T2 __hfma2(T2 a, T2 b, T2 c) {                                           \
        return T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));                           \
    }                                                                                      \
    static inline T2 __hmax2(T2 a, T2 b) { return T2(__hmax(a.x, b.x), __hmax(a.y, b.y)); } \
    static inline T2 __hmin2(T2 a, T2 b) { return T2(__hmin(a.x, b.x), __hmin(a.y, b.y)); } \
    static inline T2 h2exp(T2 a) { return T2(hexp(a.x), hexp(a.y)); }                      \
    static inline T2 h2sqrt(T2 a) { return T2(hsqrt(a.x), hsqrt(a.y)); }                   \
    static inline T2 h2rsqrt(T2 a) { return T2(hrsqrt(a.x), hrsqrt(a.y)); }

KS_HALF_FUNCTIONS(__half, __half2)
KS_HALF_FUNCTIONS(__nv_bfloat16, __nv_bfloat162)
#undef KS_HALF_FUNCTIONS

// Type trait used when checking kernel parameters against the spec's dtypes.
template <class T> struct ks_is_half_type { static constexpr bool value = false; };
template <> struct ks_is_half_type<__half> { static constexpr bool value = true; };
template <> struct ks_is_half_type<__nv_bfloat16> { static constexpr bool value = true; };
