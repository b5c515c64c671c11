// The subset of cooperative groups the CPU emulation provides: the thread block, static tiles
// of 1 to 32 threads (with shuffles, votes and cg::reduce) and coalesced groups. Grid groups
// and clusters need every block running at once and are refused before compiling (source.py).
#pragma once

#include "cuda_emu.h"

namespace cooperative_groups {

class thread_block {
public:
    void sync() const { __syncthreads(); }
    unsigned int thread_rank() const {
        return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    }
    unsigned int size() const { return blockDim.x * blockDim.y * blockDim.z; }
    unsigned int num_threads() const { return size(); }
    dim3 group_index() const { return blockIdx; }
    dim3 thread_index() const { return threadIdx; }
    dim3 group_dim() const { return blockDim; }
    dim3 dim_threads() const { return blockDim; }
};

static inline thread_block this_thread_block() { return thread_block(); }

template <unsigned int Size> class thread_block_tile {
    static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                  "tiles of 1, 2, 4, 8, 16 or 32 threads");

public:
    unsigned int base_lane() const { return ks_self()->lane & ~(Size - 1); }
    unsigned int mask() const {
        return Size == 32 ? 0xffffffffu : ((1u << Size) - 1u) << base_lane();
    }
    void sync() const { __syncwarp(mask()); }
    unsigned int thread_rank() const { return ks_self()->lane & (Size - 1); }
    static constexpr unsigned int size() { return Size; }
    static constexpr unsigned int num_threads() { return Size; }
    unsigned int meta_group_rank() const { return this_thread_block().thread_rank() / Size; }
    unsigned int meta_group_size() const {
        return (this_thread_block().size() + Size - 1) / Size;
    }
    template <class T> T shfl(T v, int rank) const { return __shfl_sync(mask(), v, rank, Size); }
    template <class T> T shfl_up(T v, unsigned int d) const {
        return __shfl_up_sync(mask(), v, d, Size);
    }
    template <class T> T shfl_down(T v, unsigned int d) const {
        return __shfl_down_sync(mask(), v, d, Size);
    }
    template <class T> T shfl_xor(T v, int m) const { return __shfl_xor_sync(mask(), v, m, Size); }
    int any(int p) const { return __any_sync(mask(), p); }
    int all(int p) const { return __all_sync(mask(), p); }
    unsigned int ballot(int p) const { return __ballot_sync(mask(), p) >> base_lane(); }
    template <class T> unsigned int match_any(T v) const {
        return __match_any_sync(mask(), v) >> base_lane();
    }
};

template <unsigned int Size, class Parent>
static inline thread_block_tile<Size> tiled_partition(const Parent&) {
    return thread_block_tile<Size>();
}

// The lanes that are converged at the point of the call.
class coalesced_group {
public:
    coalesced_group() : mask_(__activemask()) {}
    void sync() const { __syncwarp(mask_); }
    unsigned int size() const { return (unsigned int)__popc(mask_); }
    unsigned int num_threads() const { return size(); }
    unsigned int thread_rank() const { return (unsigned int)__popc(mask_ & __lanemask_lt()); }
    template <class T> T shfl(T v, unsigned int rank) const {
        return __shfl_sync(mask_, v, (int)lane_of(rank));
    }
    int any(int p) const { return __any_sync(mask_, p); }
    int all(int p) const { return __all_sync(mask_, p); }

private:
    unsigned int lane_of(unsigned int rank) const {
        unsigned int rest = mask_;
        for (unsigned int i = 0; i < rank && rest; ++i) rest &= rest - 1;
        return rest ? (unsigned int)__builtin_ctz(rest) : 0u;
    }
    unsigned int mask_;
};

static inline coalesced_group coalesced_threads() { return coalesced_group(); }

template <class Group> static inline void sync(const Group& g) { g.sync(); }

template <class T> struct plus { T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(T a, T b) const { return a ^ b; } };

// Reduce over a tile: every thread gets the result.
template <unsigned int Size, class T, class Op>
static inline T reduce(const thread_block_tile<Size>& g, T value, Op op) {
    for (unsigned int offset = Size / 2; offset > 0; offset /= 2) {
        value = op(value, g.shfl_xor(value, (int)offset));
    }
    return value;
}

}  // namespace cooperative_groups
