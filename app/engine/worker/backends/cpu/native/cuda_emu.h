// CUDA emulation header for the CPU backend of Kernel Studio.
//
// Kernel Studio compiles a CUDA source with the host C++ compiler, this header included first,
// and runs it through its runtime library (runtime/): every GPU thread is a fiber, the fibers of
// a block take turns on one CPU thread and switch only at synchronisation points (barriers and
// warp operations), and blocks run in parallel on the CPU's cores. `__shared__` variables are
// thread_local, that is one copy per CPU thread, which is one copy per running block.
#pragma once

// Standard headers come before the CUDA keyword macros below, so that the macros never reach
// the library's own code.
#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <type_traits>
#include <utility>

#include "emu_abi.h"
#include "emu_half.h"
#include "emu_math.h"
#include "emu_convert.h"
#include "emu_atomic.h"
#include "emu_checks.h"

// Thread and block coordinates of the running GPU thread.
#define threadIdx (ks_self()->thread_idx)
#define blockIdx (ks_self()->block->block_idx)
#define blockDim (ks_self()->block->block_dim)
#define gridDim (ks_self()->block->grid_dim)
#define warpSize 32

// Block-wide barriers.
static inline void __syncthreads(void) { ks_barrier(KS_BAR_SYNC, 0); }
static inline int __syncthreads_count(int p) { return ks_barrier(KS_BAR_COUNT, p != 0); }
static inline int __syncthreads_and(int p) { return ks_barrier(KS_BAR_AND, p != 0); }
static inline int __syncthreads_or(int p) { return ks_barrier(KS_BAR_OR, p != 0); }

// Warp operations: every lane of the mask meets the others at the call, values are exchanged,
// and each lane leaves with its own result.
template <class T> static inline unsigned long long ks_pack(const T& v) {
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof(T) < 8 ? sizeof(T) : 8);
    return bits;
}

template <class T> static inline T ks_shuffle(int op, unsigned int mask, const T& var, int b,
                                              int width) {
    static_assert(std::is_trivially_copyable<T>::value, "warp shuffles copy plain data");
    T result;
    const unsigned char* in = reinterpret_cast<const unsigned char*>(&var);
    unsigned char* out = reinterpret_cast<unsigned char*>(&result);
    for (size_t at = 0; at < sizeof(T); at += 8) {  // wider types move in 8-byte pieces
        size_t n = sizeof(T) - at < 8 ? sizeof(T) - at : 8;
        unsigned long long bits = 0;
        memcpy(&bits, in + at, n);
        bits = ks_warp(op, mask, bits, b, width);
        memcpy(out + at, &bits, n);
    }
    return result;
}

template <class T> static inline T __shfl_sync(unsigned int mask, T var, int src, int width = 32) {
    return ks_shuffle(KS_SHFL_IDX, mask, var, src, width);
}
template <class T>
static inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32) {
    return ks_shuffle(KS_SHFL_UP, mask, var, (int)delta, width);
}
template <class T>
static inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32) {
    return ks_shuffle(KS_SHFL_DOWN, mask, var, (int)delta, width);
}
template <class T>
static inline T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = 32) {
    return ks_shuffle(KS_SHFL_XOR, mask, var, lane_mask, width);
}
static inline unsigned int __ballot_sync(unsigned int mask, int p) {
    return (unsigned int)ks_warp(KS_BALLOT, mask, p != 0, 0, 32);
}
static inline int __any_sync(unsigned int mask, int p) { return (int)ks_warp(KS_ANY, mask, p != 0, 0, 32); }
static inline int __all_sync(unsigned int mask, int p) { return (int)ks_warp(KS_ALL, mask, p != 0, 0, 32); }
static inline unsigned int __activemask(void) {
    return (unsigned int)ks_warp(KS_ACTIVEMASK, 0xffffffffu, 0, 0, 32);
}
static inline void __syncwarp(unsigned int mask = 0xffffffffu) { ks_warp(KS_SYNCWARP, mask, 0, 0, 32); }
template <class T> static inline unsigned int __match_any_sync(unsigned int mask, T value) {
    return (unsigned int)ks_warp(KS_MATCH_ANY, mask, ks_pack(value), 0, 32);
}
template <class T> static inline unsigned int __match_all_sync(unsigned int mask, T value, int* pred) {
    unsigned long long r = ks_warp(KS_MATCH_ALL, mask, ks_pack(value), 0, 32);
    *pred = (int)(r >> 32);
    return (unsigned int)r;
}
static inline unsigned int __reduce_add_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)ks_warp(KS_REDUCE_ADD, mask, v, 0, 32);
}
static inline int __reduce_add_sync(unsigned int mask, int v) {
    return (int)ks_warp(KS_REDUCE_ADD, mask, (unsigned int)v, 0, 32);
}
static inline unsigned int __reduce_min_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)ks_warp(KS_REDUCE_UMIN, mask, v, 0, 32);
}
static inline int __reduce_min_sync(unsigned int mask, int v) {
    return (int)ks_warp(KS_REDUCE_MIN, mask, (unsigned int)v, 0, 32);
}
static inline unsigned int __reduce_max_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)ks_warp(KS_REDUCE_UMAX, mask, v, 0, 32);
}
static inline int __reduce_max_sync(unsigned int mask, int v) {
    return (int)ks_warp(KS_REDUCE_MAX, mask, (unsigned int)v, 0, 32);
}
static inline unsigned int __reduce_and_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)ks_warp(KS_REDUCE_AND, mask, v, 0, 32);
}
static inline unsigned int __reduce_or_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)ks_warp(KS_REDUCE_OR, mask, v, 0, 32);
}
static inline unsigned int __reduce_xor_sync(unsigned int mask, unsigned int v) {
    return (unsigned int)ks_warp(KS_REDUCE_XOR, mask, v, 0, 32);
}
static inline unsigned int __lanemask_lt(void) { return (1u << ks_self()->lane) - 1u; }
static inline unsigned int __lanemask_le(void) { return (2u << ks_self()->lane) - 1u; }
static inline unsigned int __lanemask_eq(void) { return 1u << ks_self()->lane; }
static inline unsigned int __lanemask_gt(void) { return ~__lanemask_le(); }
static inline unsigned int __lanemask_ge(void) { return ~__lanemask_lt(); }

// Time, sleep and traps.
static inline long long clock64(void) { return ks_clock(); }
static inline unsigned long long __globaltimer(void) { return (unsigned long long)ks_clock(); }
static inline void __nanosleep(unsigned int) { ks_yield(); }
static inline void __trap(void) { ks_trap("__trap() was called"); }
static inline void __brkpt(void) { ks_trap("__brkpt() was called"); }

// CUDA keywords. __shared__ variables live once per CPU thread, which runs one block at a time.
#define __global__
#define __device__
#define __host__
#define __shared__ thread_local
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __cudart_builtin__
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#define __CUDACC_RTC__ 1
#define __CUDA_ARCH__ 900
// The other macros NVRTC predefines (__CUDACC_VER_MAJOR__, ...) come with NVRTC's own values from
// macros.py, right after this header.

// `extern __shared__ T name[];` at namespace scope becomes one of these (see source.py): it
// stands for the running block's dynamic shared memory wherever it is used.
template <class T> struct ks_dynamic_shared {
    T* get() const { return reinterpret_cast<T*>(ks_self()->block->dynamic_shared); }
    operator T*() const { return get(); }
    template <class U, class = typename std::enable_if<!std::is_same<U, T>::value>::type>
    explicit operator U*() const { return reinterpret_cast<U*>(get()); }
    T& operator[](long long i) const { return get()[i]; }
    T* operator+(long long i) const { return get() + i; }
    T* operator-(long long i) const { return get() - i; }
    T& operator*() const { return *get(); }
};

// The launcher's helpers: call a kernel with CUDA-style parameters (an array of pointers to
// the values) and describe its parameter types, so that the backend can check them against
// the spec before the first launch.
template <class T> static constexpr char ks_param_kind() {
    typedef typename std::remove_cv<T>::type U;
    return std::is_pointer<U>::value ? 'p'
           : (std::is_floating_point<U>::value || ks_is_half_type<U>::value) ? 'f'
           : (std::is_integral<U>::value || std::is_enum<U>::value) ? 'i' : 'o';
}

template <class... P, size_t... I>
static inline void ks_invoke_with(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
    (void)args;
    kernel(*static_cast<typename std::remove_cv<P>::type*>(args[I])...);
}

template <class... P> static inline void ks_invoke(void (*kernel)(P...), void** args) {
    ks_invoke_with(kernel, args, std::index_sequence_for<P...>{});
}

template <class... P>
static inline int ks_describe_params(void (*)(P...), char* kinds, int* sizes, int capacity) {
    const char k[] = {ks_param_kind<P>()..., 0};
    const int s[] = {(int)sizeof(P)..., 0};
    for (int i = 0; i < (int)sizeof...(P) && i < capacity; ++i) {
        kinds[i] = k[i];
        sizes[i] = s[i];
    }
    return (int)sizeof...(P);
}

KS_EXPORT int ks_launch(void (*invoke)(void**), void** args, const unsigned int* grid,
                        const unsigned int* block, unsigned long long shared_bytes, int threads,
                        void* (*tls_anchor)(void), int single_kernel, const char* name,
                        char* error, unsigned long long error_size);
