// NF4 dequantize-and-multiply for decoding on tensor cores: out[m][n] = sum over k of x[m][k] *
// W[n][k], W stored as bitsandbytes stores a 4-bit layer loaded with double quantization (the
// app's NF4):
//   - two 4-bit codes per byte, the even element in the high nibble, each an index into NF4;
//   - each run of 64 consecutive weights (K is a multiple of 64) scaled by its absmax, and the
//     absmax values themselves quantized to 8 bits: absmax[b] = code2[q[b]] * scale2[b / 256]
//     + offset, computed in float32 as bitsandbytes computes it.
// The contract (shared with nf4_gemv_simt.cu and the reference): the NF4 codes are used rounded
// to bfloat16, each block's sum is taken in float32 and scaled by its float32 absmax.
//
// Why tensor cores: at 8 rows of x a CUDA-core kernel needs 8 multiply-adds per weight, more
// than the SM can issue while the weights stream at memory speed. Here one mma.sync (16 rows of
// W by 8 rows of x by 16 of K) takes 256 weights at once, so decoding the codes is the work,
// and the kernel is built to spend as few instructions on it as it can: three a code byte (a
// shift, a mask-and-merge, a shared-memory load), about six a byte in all.
//
// How: a block is SPLIT warps over one tile of 16 rows of W; each warp takes a share of the
// 64-weight blocks of K. A lane holds 8 bytes (16 codes) of row g and of row g + 8 of the tile
// (g = lane / 4) and 16 bf16 values of x row g. The mma's K order is a permutation of K (the
// same one for W and x, so the sum is the same): in step j a lane's codes 4j..4j+3 fill its A
// registers and x's same four elements its B registers. A code byte becomes two bf16 codes by
// one look-up in a table kept in 32 copies, one per lane's bank, so lanes never conflict. The
// mma sums one 64-weight block; its result is scaled by the block's absmax and added up in
// float32. The warps' sums meet in shared memory and the first warp writes bf16. More than 8
// rows of x take more passes over W.
//
// Rows of W past N and rows of x past M are read as the last row instead (a row of the mma's
// result depends only on its own rows of A and B, and those results are never written), so
// the loads need no conditions; blocks of K past a warp's share are loaded as its last block
// and left out of the sum.
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef SPLIT
#define SPLIT 8           // warps per block, splitting K (the launch's block is SPLIT * 32)
#endif
// Measured on the H200 (7B layer shapes, 1 and 8 rows, against 4 blocks a stage, 2 blocks an
// SM at 128 registers, 4 and 16 warps a block, and the next stage's loads issued before the
// current one is multiplied): 2 blocks a stage at 3 blocks an SM (no spills at 80 registers),
// launched as 3 blocks an SM that loop over the tiles, was the fastest for the gate/up shape
// and within 15% of the best for the others.
#ifndef UNROLL
#define UNROLL 2          // 64-weight blocks a lane loads before it multiplies them (at most 4)
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 3      // blocks an SM keeps
#endif
#define TILE_N 16         // rows of W per block (the mma's M)
#define PASS_M 8          // rows of x per pass (the mma's N)
#define SCALE_BLOCK 256   // absmax values per second-level scale

// bitsandbytes' NF4 code table (the quantiles of a normal distribution, scaled to [-1, 1]),
// each rounded to the nearest bfloat16: the bits of -1.0, -0.6961928, ..., 0.7229568, 1.0.
__constant__ uint16_t NF4_BF16[16] = {
    0xbf80, 0xbf32, 0xbf06, 0xbeca, 0xbe92, 0xbe3d, 0xbdba, 0x0000,
    0x3da3, 0x3e25, 0x3e7c, 0x3ead, 0x3ee2, 0x3f10, 0x3f39, 0x3f80};

// D += A (16x16, bf16, row) * B (16x8, bf16, col), in float32.
__device__ __forceinline__ void mma_block(const uint32_t a[4], uint32_t b0, uint32_t b1, float d[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The float32 absmax of block b from its 8-bit code, as bitsandbytes dequantizes it: a product,
// then a sum, each rounded (no fused multiply-add).
__device__ __forceinline__ float block_absmax(uint32_t code, const float* absmax_code,
                                              const float* scale2, float offset, uint32_t b) {
    return __fadd_rn(__fmul_rn(absmax_code[code], __ldg(scale2 + b / SCALE_BLOCK)), offset);
}

// The two bf16 codes of byte `k` of `word`. The table's entry for byte v and lane l lies at
// byte offset 128 v + 4 l: one shift and one mask-and-merge make the address.
__device__ __forceinline__ uint32_t codes_of(const char* table, uint32_t lane4, uint32_t word, int k) {
    const uint32_t v = k == 0 ? word << 7 : word >> (8 * k - 7);
    return *reinterpret_cast<const uint32_t*>(table + ((v & 0x7f80u) | lane4));
}

// Entry v * 32 + lane holds byte v's two codes as bf16 (high nibble in the low half). Warp w
// fills the entries of bytes w * 256 / SPLIT onwards, a row of 32 at a store.
__device__ __forceinline__ void fill_table(uint32_t* pairs, int warp, int lane) {
    constexpr int per_warp = 256 / SPLIT;
#pragma unroll
    for (int i = 0; i < per_warp; ++i) {
        const int v = warp * per_warp + i;
        pairs[v * 32 + lane] = (uint32_t)NF4_BF16[v >> 4] | ((uint32_t)NF4_BF16[v & 15] << 16);
    }
}

// Where a lane reads in a tile: its two rows of W, its row of x, its rows' absmax codes.
struct Lane {
    const uint2* w_low;
    const uint2* w_high;
    const uint4* x_row;
    uint32_t a_low, a_high;
};

// Blocks b0..b0 + UNROLL - 1 of the lane's rows added to `acc`. Every load of a stage is issued
// before the first multiply; the other warps of the SM hide the wait. A stage that may run past
// the warp's share (TAIL) reads its last block instead and leaves those out of the sum.
template <bool TAIL>
__device__ __forceinline__ void stage(const Lane& at, int b0, int last, const char* table, uint32_t lane4,
                                      const uint8_t* absmax_q, const float* absmax_code,
                                      const float* scale2, float offset, float acc[4]) {
    uint2 lw[UNROLL], hw[UNROLL];
    uint4 xa[UNROLL], xb[UNROLL];
    float low[UNROLL], high[UNROLL];
    // Pointers to block b0, so that each load's offset is a constant.
    const uint2* w_low = at.w_low + 4 * b0;
    const uint2* w_high = at.w_high + 4 * b0;
    const uint4* x_row = at.x_row + 8 * b0;
    const uint8_t* q_low = absmax_q + at.a_low + b0;
    const uint8_t* q_high = absmax_q + at.a_high + b0;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const int v = TAIL ? min(u, last - 1 - b0) : u;  // the block read, from b0
        lw[u] = __ldg(w_low + 4 * v);
        hw[u] = __ldg(w_high + 4 * v);
        xa[u] = __ldg(x_row + 8 * v);
        xb[u] = __ldg(x_row + 8 * v + 1);
    }
    // The four lanes of a quad share their rows: lane q works out block b0 + q's two absmax
    // values (UNROLL is at most 4) and hands them to the others; where UNROLL is below 4 the
    // other lanes repeat a block of the stage (never one past it: that may lie past the end).
    const int q = threadIdx.x & 3;
    const int mine = TAIL ? min(q, last - 1 - b0) : q % UNROLL;
    const float my_low = block_absmax(__ldg(q_low + mine), absmax_code, scale2, offset, at.a_low + b0 + mine);
    const float my_high = block_absmax(__ldg(q_high + mine), absmax_code, scale2, offset, at.a_high + b0 + mine);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        low[u] = __shfl_sync(0xffffffffu, my_low, u, 4);
        high[u] = __shfl_sync(0xffffffffu, my_high, u, 4);
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const uint32_t xw[8] = {xa[u].x, xa[u].y, xa[u].z, xa[u].w, xb[u].x, xb[u].y, xb[u].z, xb[u].w};
        const uint32_t lo[2] = {lw[u].x, lw[u].y};
        const uint32_t hi[2] = {hw[u].x, hw[u].y};
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            // Bytes 2j and 2j + 1 of the lane's 8: codes 4j..4j+3.
            const int k = 2 * (j & 1);
            const uint32_t a[4] = {codes_of(table, lane4, lo[j >> 1], k),
                                   codes_of(table, lane4, hi[j >> 1], k),
                                   codes_of(table, lane4, lo[j >> 1], k + 1),
                                   codes_of(table, lane4, hi[j >> 1], k + 1)};
            mma_block(a, xw[2 * j], xw[2 * j + 1], d);
        }
        if (!TAIL || b0 + u < last) {
            // d[0], d[1]: row g, x rows 2q and 2q + 1; d[2], d[3]: row g + 8.
            acc[0] = fmaf(d[0], low[u], acc[0]);
            acc[1] = fmaf(d[1], low[u], acc[1]);
            acc[2] = fmaf(d[2], high[u], acc[2]);
            acc[3] = fmaf(d[3], high[u], acc[3]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(SPLIT * 32, MIN_BLOCKS) nf4_gemv(const __nv_bfloat16* __restrict__ x,
                                    const uint8_t* __restrict__ w,
                                    const uint8_t* __restrict__ absmax_q,
                                    const float* __restrict__ code2,
                                    const float* __restrict__ scale2, float offset,
                                    __nv_bfloat16* __restrict__ out, int M, int N, int K) {
    __shared__ uint32_t pairs[256 * 32];
    __shared__ float absmax_code[256];
    __shared__ float partial[SPLIT][32][4];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    fill_table(pairs, warp, lane);
    for (int i = threadIdx.x; i < 256; i += blockDim.x) absmax_code[i] = code2[i];
    __syncthreads();

    const int g = lane >> 2, q = lane & 3;
    const int tiles = (N + TILE_N - 1) / TILE_N;
    const int blocks = K / 64;  // 64-weight blocks in a row
    const int share = (blocks + SPLIT - 1) / SPLIT;
    const int first = warp * share;
    const int last = min(first + share, blocks);
    const char* table = reinterpret_cast<const char*>(pairs);
    const uint32_t lane4 = 4u * lane;

    for (int m0 = 0; m0 < M; m0 += PASS_M) {
        // The row of x this lane feeds to the mma; its bf16 values 16q..16q+15 of each block.
        const int m = min(m0 + g, M - 1);
        const uint4* x_row = reinterpret_cast<const uint4*>(x + (size_t)m * K) + 2 * q;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            const int n_low = min(tile * TILE_N + g, N - 1), n_high = min(tile * TILE_N + g + 8, N - 1);
            // The lane's 8 bytes of a block: bytes 8q..8q+7 of its 32.
            const uint2* w_low = reinterpret_cast<const uint2*>(w + (size_t)n_low * (K / 2)) + q;
            const uint2* w_high = reinterpret_cast<const uint2*>(w + (size_t)n_high * (K / 2)) + q;
            const uint32_t a_low = (uint32_t)n_low * (uint32_t)blocks;
            const uint32_t a_high = (uint32_t)n_high * (uint32_t)blocks;
            const Lane at = {w_low, w_high, x_row, a_low, a_high};
            float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            int b0 = first;
            for (; b0 + UNROLL <= last; b0 += UNROLL)
                stage<false>(at, b0, last, table, lane4, absmax_q, absmax_code, scale2, offset, acc);
            if (b0 < last) stage<true>(at, b0, last, table, lane4, absmax_q, absmax_code, scale2, offset, acc);
#pragma unroll
            for (int i = 0; i < 4; ++i) partial[warp][lane][i] = acc[i];
            __syncthreads();
            if (warp == 0) {
                float total[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                for (int s = 0; s < SPLIT; ++s) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) total[i] += partial[s][lane][i];
                }
                const int row_low = tile * TILE_N + g, row_high = row_low + 8, m_first = m0 + 2 * q;
                const bool has_low = row_low < N, has_high = row_high < N;
                if (has_low && m_first < M) out[(size_t)m_first * N + row_low] = __float2bfloat16(total[0]);
                if (has_low && m_first + 1 < M) out[(size_t)(m_first + 1) * N + row_low] = __float2bfloat16(total[1]);
                if (has_high && m_first < M) out[(size_t)m_first * N + row_high] = __float2bfloat16(total[2]);
                if (has_high && m_first + 1 < M) out[(size_t)(m_first + 1) * N + row_high] = __float2bfloat16(total[3]);
            }
            __syncthreads();  // the partial sums are read before the next tile writes them
        }
    }
}
