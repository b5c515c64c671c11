// CUDA's built-in vector types (char1 ... double4, dim3) for the CPU emulation.
//
// Sizes and alignments follow CUDA's vector_types.h: two- and four-element types are aligned to
// their whole size (at most 16 bytes), so a float4 load through a reinterpret_cast has the same
// alignment requirement on the CPU as on the GPU. There are no arithmetic operators, exactly as
// in CUDA (helper_math.h-style operators belong to the user's code).
#pragma once

#define KS_VEC_ALIGN2(T) alignas(2 * sizeof(T) > 16 ? 16 : 2 * sizeof(T))
#define KS_VEC_ALIGN4(T) alignas(4 * sizeof(T) > 16 ? 16 : 4 * sizeof(T))

#define KS_DEFINE_VECTOR(T, NAME)                                                           \
    struct NAME##1 { T x; };                                                                \
    struct KS_VEC_ALIGN2(T) NAME##2 { T x, y; };                                            \
    struct NAME##3 { T x, y, z; };                                                          \
    struct KS_VEC_ALIGN4(T) NAME##4 { T x, y, z, w; };                                      \
    static inline NAME##1 make_##NAME##1(T x) { NAME##1 v; v.x = x; return v; }             \
    static inline NAME##2 make_##NAME##2(T x, T y) { NAME##2 v; v.x = x; v.y = y; return v; } \
    static inline NAME##3 make_##NAME##3(T x, T y, T z) {                                   \
        NAME##3 v; v.x = x; v.y = y; v.z = z; return v;                                     \
    }                                                                                       \
    static inline NAME##4 make_##NAME##4(T x, T y, T z, T w) {                              \
        NAME##4 v; v.x = x; v.y = y; v.z = z; v.w = w; return v;                            \
    }

KS_DEFINE_VECTOR(signed char, char)
KS_DEFINE_VECTOR(unsigned char, uchar)
KS_DEFINE_VECTOR(short, short)
KS_DEFINE_VECTOR(unsigned short, ushort)
KS_DEFINE_VECTOR(int, int)
KS_DEFINE_VECTOR(unsigned int, uint)
KS_DEFINE_VECTOR(long, long)
KS_DEFINE_VECTOR(unsigned long, ulong)
KS_DEFINE_VECTOR(long long, longlong)
KS_DEFINE_VECTOR(unsigned long long, ulonglong)
KS_DEFINE_VECTOR(float, float)
KS_DEFINE_VECTOR(double, double)

#undef KS_DEFINE_VECTOR
#undef KS_VEC_ALIGN2
#undef KS_VEC_ALIGN4

// dim3: a uint3 whose missing components default to 1.
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
