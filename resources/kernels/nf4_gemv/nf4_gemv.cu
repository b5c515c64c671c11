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
// W by 8 rows of x by 16 of K) takes 256 weights at once, so decoding the codes is the work.
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
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef SPLIT
#define SPLIT 8           // warps per block, splitting K (the launch's block is SPLIT * 32)
#endif
// Measured on the H200 (7B layer shapes, 1 and 8 rows): 2 blocks a stage with 3 blocks an SM
// (at most 85 registers) beat 4 with 2; 4 warps a block, 16, and evict-first loads of the codes
// did not help; a grid of fewer blocks than tiles helped only the gate/up shape with 4.
#ifndef UNROLL
#define UNROLL 2          // 64-weight blocks a lane loads at once (one stage)
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 3      // blocks an SM keeps: no spills at SPLIT 8
#endif
#ifdef STREAM_W
#define LOAD_W(p) __ldcs(p)  // the codes are read once: evict first, keep x in the caches
#else
#define LOAD_W(p) __ldg(p)
#endif
#define TILE_N 16         // rows of W per block (the mma's M)
#define PASS_M 8          // rows of x per pass (the mma's N)
#define SCALE_BLOCK 256   // absmax values per second-level scale

// bitsandbytes' NF4 code table (the quantiles of a normal distribution, scaled to [-1, 1]).
__constant__ float NF4_CODE[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};

__device__ __forceinline__ uint32_t bf16_bits(float v) {
    return (uint32_t)__bfloat16_as_ushort(__float2bfloat16(v));
}

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
                                              const float* scale2, float offset, size_t b) {
    return __fadd_rn(__fmul_rn(absmax_code[code], __ldg(scale2 + b / SCALE_BLOCK)), offset);
}

// What a lane loads of UNROLL blocks of its tile's two rows: the codes and the absmax codes.
struct Stage {
    uint2 low[UNROLL], high[UNROLL];
    uint32_t q_low[UNROLL], q_high[UNROLL];
};

// Where a lane reads in a tile: its rows, and whether they exist.
struct Rows {
    const uint2* low;
    const uint2* high;
    size_t absmax_low, absmax_high;
    bool has_low, has_high;
};

__device__ __forceinline__ Rows rows_of(const uint8_t* w, int tile, int g, int q, int N, int K) {
    Rows r;
    const int n_low = tile * TILE_N + g, n_high = n_low + 8;
    r.has_low = n_low < N;
    r.has_high = n_high < N;
    // A lane's 8 bytes of a block: bytes 8q..8q+7 of its 32.
    r.low = reinterpret_cast<const uint2*>(w + (size_t)n_low * (K / 2)) + q;
    r.high = reinterpret_cast<const uint2*>(w + (size_t)n_high * (K / 2)) + q;
    r.absmax_low = (size_t)n_low * (K / 64);
    r.absmax_high = (size_t)n_high * (K / 64);
    return r;
}

// Blocks [b0, b0 + UNROLL) of the lane's rows; zeros past `last` or past N.
__device__ __forceinline__ Stage load_stage(const Rows& r, const uint8_t* absmax_q, int b0, int last) {
    Stage s;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const int b = b0 + u;
        const bool low = b < last && r.has_low, high = b < last && r.has_high;
        s.low[u] = low ? LOAD_W(r.low + 4 * b) : make_uint2(0, 0);
        s.high[u] = high ? LOAD_W(r.high + 4 * b) : make_uint2(0, 0);
        s.q_low[u] = low ? __ldg(absmax_q + r.absmax_low + b) : 0u;
        s.q_high[u] = high ? __ldg(absmax_q + r.absmax_high + b) : 0u;
    }
    return s;
}

extern "C" __global__ void __launch_bounds__(SPLIT * 32, MIN_BLOCKS) nf4_gemv(const __nv_bfloat16* __restrict__ x,
                                    const uint8_t* __restrict__ w,
                                    const uint8_t* __restrict__ absmax_q,
                                    const float* __restrict__ code2,
                                    const float* __restrict__ scale2, float offset,
                                    __nv_bfloat16* __restrict__ out, int M, int N, int K) {
    // Entry i * 32 + lane holds byte i's two codes as bf16 (high nibble in the low half).
    __shared__ uint32_t pairs[256 * 32];
    __shared__ float absmax_code[256];
    __shared__ float partial[SPLIT][32][4];
    for (int i = threadIdx.x; i < 256 * 32; i += blockDim.x) {
        const int byte = i >> 5;
        pairs[i] = bf16_bits(NF4_CODE[byte >> 4]) | (bf16_bits(NF4_CODE[byte & 15]) << 16);
    }
    for (int i = threadIdx.x; i < 256; i += blockDim.x) absmax_code[i] = code2[i];
    __syncthreads();

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, q = lane & 3;
    const int tiles = (N + TILE_N - 1) / TILE_N;
    const int blocks = K / 64;  // 64-weight blocks in a row
    const int share = (blocks + SPLIT - 1) / SPLIT;
    const int first = warp * share;
    const int last = min(first + share, blocks);
    const int stages = (share + UNROLL - 1) / UNROLL;  // the same for every warp: one barrier a tile
    const uint32_t* table = pairs + lane;

    for (int m0 = 0; m0 < M; m0 += PASS_M) {
        const int m = m0 + g;  // the row of x this lane feeds to the mma
        const uint4* x_row = reinterpret_cast<const uint4*>(x + (size_t)m * K) + 2 * q;
        // A block may serve several tiles (a grid smaller than the tiles): the next stage's
        // loads, of this tile or the next, are in flight while the current one is multiplied.
        int tile = blockIdx.x;
        Rows rows = rows_of(w, tile, g, q, N, K);
        Stage current = load_stage(rows, absmax_q, first, tile < tiles ? last : 0);
        while (tile < tiles) {
            float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (int st = 0; st < stages; ++st) {
                const int b0 = first + st * UNROLL;
                const bool tile_ends = st + 1 == stages;
                const int next_tile = tile_ends ? tile + gridDim.x : tile;
                const Rows next_rows = tile_ends ? rows_of(w, next_tile, g, q, N, K) : rows;
                const Stage next = load_stage(next_rows, absmax_q,
                                              tile_ends ? first : b0 + UNROLL,
                                              next_tile < tiles ? last : 0);
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    const int b = b0 + u;
                    const bool in = b < last;
                    const uint4 none = make_uint4(0, 0, 0, 0);
                    const uint4 x0 = in && m < M ? __ldg(x_row + 8 * b) : none;
                    const uint4 x1 = in && m < M ? __ldg(x_row + 8 * b + 1) : none;
                    const uint32_t xw[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
                    const uint32_t lw[2] = {current.low[u].x, current.low[u].y};
                    const uint32_t hw[2] = {current.high[u].x, current.high[u].y};
                    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        // Bytes 2j and 2j + 1 of the lane's 8: codes 4j..4j+3.
                        const int shift = 16 * (j & 1);
                        const uint32_t a[4] = {
                            table[((lw[j >> 1] >> shift) & 0xffu) << 5],
                            table[((hw[j >> 1] >> shift) & 0xffu) << 5],
                            table[((lw[j >> 1] >> (shift + 8)) & 0xffu) << 5],
                            table[((hw[j >> 1] >> (shift + 8)) & 0xffu) << 5]};
                        mma_block(a, xw[2 * j], xw[2 * j + 1], d);
                    }
                    if (in) {
                        // d[0], d[1]: row g, x rows 2q and 2q + 1; d[2], d[3]: row g + 8.
                        const float low = rows.has_low ? block_absmax(current.q_low[u], absmax_code, scale2, offset, rows.absmax_low + b) : 0.0f;
                        const float high = rows.has_high ? block_absmax(current.q_high[u], absmax_code, scale2, offset, rows.absmax_high + b) : 0.0f;
                        acc[0] = fmaf(d[0], low, acc[0]);
                        acc[1] = fmaf(d[1], low, acc[1]);
                        acc[2] = fmaf(d[2], high, acc[2]);
                        acc[3] = fmaf(d[3], high, acc[3]);
                    }
                }
                current = next;
            }
#pragma unroll
            for (int i = 0; i < 4; ++i) partial[warp][lane][i] = acc[i];
            __syncthreads();
            if (warp == 0) {
                float total[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                for (int s = 0; s < SPLIT; ++s) {
#pragma unroll
                    for (int i = 0; i < 4; ++i) total[i] += partial[s][lane][i];
                }
                const int n_low = tile * TILE_N + g, n_high = n_low + 8, m_first = m0 + 2 * q;
                if (rows.has_low && m_first < M) out[(size_t)m_first * N + n_low] = __float2bfloat16(total[0]);
                if (rows.has_low && m_first + 1 < M) out[(size_t)(m_first + 1) * N + n_low] = __float2bfloat16(total[1]);
                if (rows.has_high && m_first < M) out[(size_t)m_first * N + n_high] = __float2bfloat16(total[2]);
                if (rows.has_high && m_first + 1 < M) out[(size_t)(m_first + 1) * N + n_high] = __float2bfloat16(total[3]);
            }
            __syncthreads();  // the partial sums are read before the next tile writes them
            tile += gridDim.x;
            rows = rows_of(w, tile, g, q, N, K);
        }
    }
}
