// CUDA atomics for the CPU emulation. Blocks run in parallel on the CPU's cores, so these are
// real atomic read-modify-write operations on the shared memory of the process (GCC's __atomic
// builtins); floating-point and 16-bit forms are compare-and-swap loops on the bit pattern.
#pragma once

#define KS_SEQ __ATOMIC_SEQ_CST

// Compare-and-swap loop applying `op` to the value stored at `p`; returns the old value.
template <class T, class Bits, class Op> static inline T ks_atomic_update(T* p, Op op) {
    Bits* bits = reinterpret_cast<Bits*>(p);
    Bits old_bits = __atomic_load_n(bits, KS_SEQ);
    for (;;) {
        T old_value, new_value;
        memcpy(&old_value, &old_bits, sizeof(T));
        new_value = op(old_value);
        Bits new_bits;
        memcpy(&new_bits, &new_value, sizeof(T));
        if (__atomic_compare_exchange_n(bits, &old_bits, new_bits, false, KS_SEQ, KS_SEQ)) {
            return old_value;
        }
    }
}

#define KS_INTEGER_ATOMICS(T)                                                               \
    static inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, KS_SEQ); }        \
    static inline T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, KS_SEQ); }        \
    static inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, KS_SEQ); }      \
    static inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, KS_SEQ); }        \
    static inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, KS_SEQ); }          \
    static inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, KS_SEQ); }        \
    static inline T atomicMin(T* p, T v) {                                                  \
        return ks_atomic_update<T, T>(p, [v](T old) { return old < v ? old : v; });         \
    }                                                                                       \
    static inline T atomicMax(T* p, T v) {                                                  \
        return ks_atomic_update<T, T>(p, [v](T old) { return old > v ? old : v; });         \
    }                                                                                       \
    static inline T atomicCAS(T* p, T compare, T v) {                                       \
        __atomic_compare_exchange_n(p, &compare, v, false, KS_SEQ, KS_SEQ);                 \
        return compare;                                                                     \
    }

KS_INTEGER_ATOMICS(int)
KS_INTEGER_ATOMICS(unsigned int)
KS_INTEGER_ATOMICS(long long)
KS_INTEGER_ATOMICS(unsigned long long)
#undef KS_INTEGER_ATOMICS

static inline unsigned short atomicCAS(unsigned short* p, unsigned short compare,
                                       unsigned short v) {
    __atomic_compare_exchange_n(p, &compare, v, false, KS_SEQ, KS_SEQ);
    return compare;
}
static inline unsigned int atomicInc(unsigned int* p, unsigned int limit) {
    return ks_atomic_update<unsigned int, unsigned int>(
        p, [limit](unsigned int old) { return old >= limit ? 0u : old + 1u; });
}
static inline unsigned int atomicDec(unsigned int* p, unsigned int limit) {
    return ks_atomic_update<unsigned int, unsigned int>(
        p, [limit](unsigned int old) { return old == 0u || old > limit ? limit : old - 1u; });
}

#define KS_FLOAT_ATOMICS(T, BITS)                                                           \
    static inline T atomicAdd(T* p, T v) {                                                  \
        return ks_atomic_update<T, BITS>(p, [v](T old) { return old + v; });                \
    }                                                                                       \
    static inline T atomicSub(T* p, T v) {                                                  \
        return ks_atomic_update<T, BITS>(p, [v](T old) { return old - v; });                \
    }                                                                                       \
    static inline T atomicExch(T* p, T v) {                                                 \
        return ks_atomic_update<T, BITS>(p, [v](T) { return v; });                          \
    }                                                                                       \
    static inline T atomicMin(T* p, T v) {                                                  \
        return ks_atomic_update<T, BITS>(p, [v](T old) { return old < v ? old : v; });      \
    }                                                                                       \
    static inline T atomicMax(T* p, T v) {                                                  \
        return ks_atomic_update<T, BITS>(p, [v](T old) { return old > v ? old : v; });      \
    }

KS_FLOAT_ATOMICS(float, unsigned int)
KS_FLOAT_ATOMICS(double, unsigned long long)
KS_FLOAT_ATOMICS(__half, unsigned short)
KS_FLOAT_ATOMICS(__nv_bfloat16, unsigned short)
#undef KS_FLOAT_ATOMICS

static inline __half2 atomicAdd(__half2* p, __half2 v) {
    return ks_atomic_update<__half2, unsigned int>(p, [v](__half2 old) { return old + v; });
}
static inline __nv_bfloat162 atomicAdd(__nv_bfloat162* p, __nv_bfloat162 v) {
    return ks_atomic_update<__nv_bfloat162, unsigned int>(
        p, [v](__nv_bfloat162 old) { return old + v; });
}

// Vector atomics (sm_90): each element is updated atomically, as on the GPU.
static inline float2 atomicAdd(float2* p, float2 v) {
    return make_float2(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y));
}
static inline float4 atomicAdd(float4* p, float4 v) {
    return make_float4(atomicAdd(&p->x, v.x), atomicAdd(&p->y, v.y), atomicAdd(&p->z, v.z),
                       atomicAdd(&p->w, v.w));
}

// Scoped variants (_block, _system) have the same effect here: every atomic is system-wide.
#define KS_SCOPED(NAME)                                                                     \
    template <class... A> static inline auto NAME##_block(A... a) -> decltype(NAME(a...)) { \
        return NAME(a...);                                                                  \
    }                                                                                       \
    template <class... A> static inline auto NAME##_system(A... a) -> decltype(NAME(a...)) { \
        return NAME(a...);                                                                  \
    }
KS_SCOPED(atomicAdd)
KS_SCOPED(atomicSub)
KS_SCOPED(atomicExch)
KS_SCOPED(atomicMin)
KS_SCOPED(atomicMax)
KS_SCOPED(atomicInc)
KS_SCOPED(atomicDec)
KS_SCOPED(atomicCAS)
KS_SCOPED(atomicAnd)
KS_SCOPED(atomicOr)
KS_SCOPED(atomicXor)
#undef KS_SCOPED

static inline void __threadfence(void) { __atomic_thread_fence(KS_SEQ); }
static inline void __threadfence_block(void) { __atomic_thread_fence(KS_SEQ); }
static inline void __threadfence_system(void) { __atomic_thread_fence(KS_SEQ); }

// Cache-hinted loads and stores are plain memory accesses on the CPU.
template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T __ldcg(const T* p) { return *p; }
template <class T> static inline T __ldca(const T* p) { return *p; }
template <class T> static inline T __ldcs(const T* p) { return *p; }
template <class T> static inline T __ldlu(const T* p) { return *p; }
template <class T> static inline T __ldcv(const T* p) { return *p; }
template <class T> static inline void __stcg(T* p, T v) { *p = v; }
template <class T> static inline void __stcs(T* p, T v) { *p = v; }
template <class T> static inline void __stwb(T* p, T v) { *p = v; }
template <class T> static inline void __stwt(T* p, T v) { *p = v; }
