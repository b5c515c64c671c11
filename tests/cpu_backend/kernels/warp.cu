// Warp intrinsics of the CPU emulation; the test computes the expected values with PTX's rules.

extern "C" __global__ void shuffles(const int* in, int* out, int n)
{
    int t = threadIdx.x;
    int lane = t % 32;
    int v = in[t];
    out[0 * n + t] = __shfl_sync(0xffffffffu, v, (lane * 7) % 32);
    out[1 * n + t] = __shfl_up_sync(0xffffffffu, v, 3);
    out[2 * n + t] = __shfl_down_sync(0xffffffffu, v, 5);
    out[3 * n + t] = __shfl_xor_sync(0xffffffffu, v, 6);
    out[4 * n + t] = __shfl_down_sync(0xffffffffu, v, 2, 8);
    out[5 * n + t] = __shfl_sync(0xffffffffu, v, 3, 16);
    // The two halves of the warp shuffle separately, with partial masks, in different branches.
    int r;
    if (lane < 16) {
        r = __shfl_xor_sync(0x0000ffffu, v, 1);
    } else {
        r = __shfl_down_sync(0xffff0000u, v, 1);
    }
    out[6 * n + t] = r;
    // Only the odd lanes take part.
    r = -1;
    if (lane & 1) {
        r = __shfl_sync(0xaaaaaaaau, v, (lane + 2) % 32);
    }
    out[7 * n + t] = r;
    // A 64-bit value and a struct wider than 8 bytes.
    double d = __shfl_xor_sync(0xffffffffu, (double)v * 0.5, 1);
    out[8 * n + t] = (int)(d * 2.0);
    int4 q = make_int4(v, v + 1, v + 2, v + 3);
    q = __shfl_sync(0xffffffffu, q, 31 - lane);
    out[9 * n + t] = q.x + q.w;
}

extern "C" __global__ void votes(const int* in, unsigned int* out, int n)
{
    int t = threadIdx.x;
    int lane = t % 32;
    int p = in[t] > 0;
    out[0 * n + t] = __ballot_sync(0xffffffffu, p);
    out[1 * n + t] = __any_sync(0xffffffffu, p);
    out[2 * n + t] = __all_sync(0xffffffffu, p);
    unsigned int half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
    out[3 * n + t] = __ballot_sync(half, p);
    out[4 * n + t] = __all_sync(half, in[t] > -1000);
    unsigned int active = 0xdeadbeefu;
    if (lane % 3 == 0) {
        active = __activemask();
    }
    out[5 * n + t] = active;
    out[6 * n + t] = __match_any_sync(0xffffffffu, in[t] & 3);
    out[7 * n + t] = __reduce_add_sync(0xffffffffu, (unsigned int)in[t]);
    out[8 * n + t] = (unsigned int)__reduce_max_sync(0xffffffffu, in[t]);
    __syncwarp();
    out[9 * n + t] = __popc(__lanemask_lt());
}

// A warp reduction with cooperative groups tiles of 8 threads.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tiles(const int* in, int* out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<8> tile = cg::tiled_partition<8>(block);
    int t = block.thread_rank();
    int sum = cg::reduce(tile, in[t], cg::plus<int>());
    out[t] = sum * 100 + (int)tile.thread_rank();
    if (t < n) {
        block.sync();
    }
}

// Coalesced groups, __match_all_sync, and 16-bit and scoped atomics.
#include <cuda_fp16.h>

extern "C" __global__ void odds_and_ends(const int* in, int* out, __half* half_sum,
                                         unsigned int* countdown)
{
    int t = threadIdx.x;
    int lane = t % 32;
    out[t] = -1;
    if (in[t] % 2 == 0) {
        cg::coalesced_group even = cg::coalesced_threads();
        // Rank 0 of the converged lanes hands its value to every member.
        out[t] = even.shfl(in[t], 0) * 1000 + (int)even.thread_rank() * 10 + (int)(even.size() > 0);
    }
    int all_same = 0;
    unsigned int mask = __match_all_sync(0xffffffffu, lane < 64 ? 7 : lane, &all_same);
    int differ = 0;
    unsigned int none = __match_all_sync(0xffffffffu, lane, &differ);
    out[blockDim.x + t] = (int)(mask == 0xffffffffu) + 2 * all_same + 4 * (none == 0u) + 8 * differ;
    atomicAdd(half_sum, __float2half(0.5f));
    atomicDec_block(countdown, 1000u);
}
