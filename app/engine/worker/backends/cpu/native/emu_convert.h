// Conversions of half and bfloat16 that the GPU has as single instructions: to every integer
// type under each rounding mode (saturating, NaN -> 0, as cvt does), from float under the
// directed modes, and whole numbers to bfloat16. Included after emu_half.h and emu_math.h.
#pragma once

// One step of a half or bfloat16 bit pattern (sign and magnitude) toward +inf or -inf.
static inline unsigned short ks_step16(unsigned short bits, bool up) {
    bool negative = (bits & 0x8000u) != 0, zero = (bits & 0x7fffu) == 0;
    if (zero) return up ? 0x0001u : 0x8001u;
    return (unsigned short)(negative == up ? bits - 1 : bits + 1);
}

// float -> 16-bit float in a directed mode: round to nearest, then step once when that landed
// on the wrong side of f (NaN and exact results stay).
static inline unsigned short ks_directed16(float f, unsigned short nearest, float back, bool up) {
    if (f != f || back == f) return nearest;
    if (up ? back < f : back > f) return ks_step16(nearest, up);
    return nearest;
}
static inline __half ks_f2h_directed(float f, bool up) {
    unsigned short nearest = ks_f2h_bits(f);
    __half_raw r;
    r.x = ks_directed16(f, nearest, ks_h2f(nearest), up);
    return __half(r);
}
static inline __nv_bfloat16 ks_f2bf_directed(float f, bool up) {
    unsigned short nearest = ks_f2bf_bits(f);
    __nv_bfloat16_raw r;
    r.x = ks_directed16(f, nearest, ks_bf2f(nearest), up);
    return __nv_bfloat16(r);
}
static inline __half __float2half_rd(float f) { return ks_f2h_directed(f, false); }
static inline __half __float2half_ru(float f) { return ks_f2h_directed(f, true); }
static inline __nv_bfloat16 __float2bfloat16_rd(float f) { return ks_f2bf_directed(f, false); }
static inline __nv_bfloat16 __float2bfloat16_ru(float f) { return ks_f2bf_directed(f, true); }
static inline __nv_bfloat16 __float2bfloat16_rz(float f) {
    unsigned int x;
    memcpy(&x, &f, 4);
    __nv_bfloat16_raw r;
    r.x = (x & 0x7fffffffu) > 0x7f800000u ? (unsigned short)0x7fffu : (unsigned short)(x >> 16);
    return __nv_bfloat16(r);
}

// half/bfloat16 -> integer: the value is exact in float, so the float conversions (which
// saturate as the GPU does) give the GPU's answer.
#define KS_16_TO_INT(FROM, STEM, I, SAT)                                                       \
    static inline I STEM##_rn(FROM h) { return SAT<I>(nearbyint((double)(float)h)); }          \
    static inline I STEM##_rz(FROM h) { return SAT<I>(trunc((double)(float)h)); }              \
    static inline I STEM##_rd(FROM h) { return SAT<I>(floor((double)(float)h)); }              \
    static inline I STEM##_ru(FROM h) { return SAT<I>(ceil((double)(float)h)); }
KS_16_TO_INT(__half, __half2short, short, ks_saturate)
KS_16_TO_INT(__half, __half2ushort, unsigned short, ks_saturate)
KS_16_TO_INT(__half, __half2uint, unsigned int, ks_saturate)
KS_16_TO_INT(__half, __half2ll, long long, ks_saturate_long)
KS_16_TO_INT(__half, __half2ull, unsigned long long, ks_saturate_long)
KS_16_TO_INT(__nv_bfloat16, __bfloat162int, int, ks_saturate)
KS_16_TO_INT(__nv_bfloat16, __bfloat162short, short, ks_saturate)
KS_16_TO_INT(__nv_bfloat16, __bfloat162ushort, unsigned short, ks_saturate)
KS_16_TO_INT(__nv_bfloat16, __bfloat162uint, unsigned int, ks_saturate)
KS_16_TO_INT(__nv_bfloat16, __bfloat162ll, long long, ks_saturate_long)
KS_16_TO_INT(__nv_bfloat16, __bfloat162ull, unsigned long long, ks_saturate_long)
#undef KS_16_TO_INT

static inline __nv_bfloat16 __int2bfloat16_rn(int v) { return __nv_bfloat16((float)v); }
static inline __nv_bfloat16 __uint2bfloat16_rn(unsigned int v) { return __nv_bfloat16((float)v); }
