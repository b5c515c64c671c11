// The interface between kernels compiled for the CPU emulation and its runtime library.
//
// Each GPU thread is a fiber with its own stack. Stacks are KS_STACK_SIZE bytes and aligned to
// that size, and the first word of a stack's lowest page points at the fiber that owns it, so a
// kernel finds "its" thread (threadIdx, blockIdx, ...) from the stack pointer alone, without
// thread-local storage or a call into the runtime.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "emu_vector.h"

#define KS_STACK_SIZE (512u * 1024u)
#define KS_WARP_SIZE 32

struct ks_block_info {
    uint3 block_idx;
    dim3 block_dim;
    dim3 grid_dim;
    unsigned char* dynamic_shared;
};

struct ks_thread_info {
    uint3 thread_idx;
    unsigned int lane;
    const ks_block_info* block;
};

// Warp operations, all served by one collective entry point of the runtime.
enum ks_warp_op {
    KS_SHFL_IDX, KS_SHFL_UP, KS_SHFL_DOWN, KS_SHFL_XOR, KS_BALLOT, KS_ANY, KS_ALL, KS_SYNCWARP,
    KS_MATCH_ANY, KS_MATCH_ALL, KS_REDUCE_ADD, KS_REDUCE_MIN, KS_REDUCE_MAX, KS_REDUCE_UMIN,
    KS_REDUCE_UMAX, KS_REDUCE_AND, KS_REDUCE_OR, KS_REDUCE_XOR, KS_ACTIVEMASK
};

// Block-wide barrier flavours (__syncthreads, _count, _and, _or).
enum ks_barrier_op { KS_BAR_SYNC, KS_BAR_COUNT, KS_BAR_AND, KS_BAR_OR };

#define KS_EXPORT extern "C" __attribute__((visibility("default")))

KS_EXPORT int ks_barrier(int op, int predicate);
KS_EXPORT unsigned long long ks_warp(int op, unsigned int mask, unsigned long long value, int b,
                                     int width);
KS_EXPORT void ks_yield(void);
KS_EXPORT void ks_trap(const char* why) __attribute__((noreturn));
KS_EXPORT long long ks_clock(void);
// Ends the launch from the running thread: code 1 a fault the GPU reports too, 3 a construct
// the emulation refuses (its message says "not supported by the CPU backend: ...").
KS_EXPORT void ks_stop(int code, const char* message) __attribute__((noreturn));
// What the host compiler's checks (emu_checks.h) found, as a GPU would report it.
enum ks_check { KS_CHECK_ALIGN, KS_CHECK_FLOAT_CAST, KS_CHECK_SHIFT, KS_CHECK_DIVIDE };
KS_EXPORT void ks_check_failed(int check, const char* file, unsigned line, const char* type,
                               const char* other, unsigned long long pointer, unsigned align,
                               int access) __attribute__((noreturn));

// The current GPU thread, found through the stack it runs on. The stack pointer is read with
// an asm statement so that the compiler cannot tie the result to any local variable.
static inline const ks_thread_info* ks_self(void) {
    uintptr_t sp;
#if defined(__x86_64__)
    __asm__("movq %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    __asm__("mov %0, sp" : "=r"(sp));
#else
    sp = (uintptr_t)__builtin_frame_address(0);
#endif
    return *(const ks_thread_info* const*)(sp & ~(uintptr_t)(KS_STACK_SIZE - 1));
}
