// Where the host CPU and a GPU part ways, found while the kernel runs.
//
// Kernels are compiled with some of the host compiler's undefined-behaviour checks
// (-fsanitize=alignment,float-cast-overflow,shift-exponent,integer-divide-by-zero; see
// toolchain.py), and the handlers those checks call are defined here, in the kernel's own
// library, so no sanitizer runtime is loaded. Each one ends the launch the way the GPU would
// have it end, or refuses it:
// - a load or store through a misaligned pointer (a float2 at a 4-byte boundary, a double at an
//   odd address) faults on a GPU with "misaligned address"; x86 would read it happily;
// - a float->int conversion out of range saturates on a GPU (3e9 -> INT_MAX, NaN -> 0) and gives
//   INT_MIN on x86: refused, as is a shift by the type's width or more (the GPU clamps the count,
//   x86 masks it) and an integer division by zero (no fault on a GPU, SIGFPE here).
#pragma once

struct ks_ubsan_location {
    const char* file;
    unsigned line, column;
};
struct ks_ubsan_type {
    unsigned short kind, info;
    char name[1];
};
struct ks_ubsan_mismatch {
    ks_ubsan_location where;
    const ks_ubsan_type* type;
    unsigned char log_alignment, access;
};
struct ks_ubsan_cast {
    ks_ubsan_location where;
    const ks_ubsan_type *from, *to;
};
struct ks_ubsan_shift {
    ks_ubsan_location where;
    const ks_ubsan_type *left, *right;
};
struct ks_ubsan_overflow {
    ks_ubsan_location where;
    const ks_ubsan_type* type;
};

#define KS_UBSAN_HANDLER extern "C" __attribute__((visibility("hidden"), noreturn, used))
KS_UBSAN_HANDLER void __ubsan_handle_type_mismatch_v1(ks_ubsan_mismatch* d, void* pointer) {
    ks_check_failed(KS_CHECK_ALIGN, d->where.file, d->where.line, d->type->name, "",
                    (unsigned long long)pointer, 1u << d->log_alignment, d->access);
}
KS_UBSAN_HANDLER void __ubsan_handle_type_mismatch_v1_abort(ks_ubsan_mismatch* d, void* p) {
    __ubsan_handle_type_mismatch_v1(d, p);
}
KS_UBSAN_HANDLER void __ubsan_handle_float_cast_overflow(ks_ubsan_cast* d, void*) {
    ks_check_failed(KS_CHECK_FLOAT_CAST, d->where.file, d->where.line, d->from->name,
                    d->to->name, 0, 0, 0);
}
KS_UBSAN_HANDLER void __ubsan_handle_float_cast_overflow_abort(ks_ubsan_cast* d, void* v) {
    __ubsan_handle_float_cast_overflow(d, v);
}
KS_UBSAN_HANDLER void __ubsan_handle_shift_out_of_bounds(ks_ubsan_shift* d, void*, void*) {
    ks_check_failed(KS_CHECK_SHIFT, d->where.file, d->where.line, d->left->name, "", 0, 0, 0);
}
KS_UBSAN_HANDLER void __ubsan_handle_shift_out_of_bounds_abort(ks_ubsan_shift* d, void* a,
                                                              void* b) {
    __ubsan_handle_shift_out_of_bounds(d, a, b);
}
KS_UBSAN_HANDLER void __ubsan_handle_divrem_overflow(ks_ubsan_overflow* d, void*, void*) {
    ks_check_failed(KS_CHECK_DIVIDE, d->where.file, d->where.line, d->type->name, "", 0, 0, 0);
}
KS_UBSAN_HANDLER void __ubsan_handle_divrem_overflow_abort(ks_ubsan_overflow* d, void* a,
                                                          void* b) {
    __ubsan_handle_divrem_overflow(d, a, b);
}
#undef KS_UBSAN_HANDLER
