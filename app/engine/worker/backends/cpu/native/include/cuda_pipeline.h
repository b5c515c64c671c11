// The primitive pipeline API for the CPU emulation: the copy happens at once, so waiting has
// nothing left to wait for. (Reading the destination before __pipeline_wait_prior is a race on a
// GPU; here it would read the copied data.)
#pragma once
#include "cuda_emu.h"

static inline void __pipeline_memcpy_async(void* dst, const void* src, size_t size,
                                           size_t zero_fill = 0) {
    memcpy(dst, src, size - zero_fill);
    memset(static_cast<char*>(dst) + (size - zero_fill), 0, zero_fill);
}
static inline void __pipeline_commit(void) {}
static inline void __pipeline_wait_prior(size_t) {}
