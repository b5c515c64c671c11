// NF4 dequantize-and-multiply for decoding on tensor cores, the weights streamed through a ring
// of asynchronous copies: out[m][n] = sum over k of x[m][k] * W[n][k], W as bitsandbytes stores
// a 4-bit layer loaded with double quantization (the app's NF4; see nf4_gemv.cu for the layout
// and the contract, which this kernel keeps bit for bit: the same sums in the same order).
//
// Why a ring: a product at batch 1 reads each weight byte once, so its speed is the memory's,
// and the memory delivers only what is asked for ahead of time. A kernel that loads into
// registers and then works has nothing in flight while it works; here each warp keeps STAGES - 1
// stages of its weights on the way (cp.async into shared memory, no registers held) while it
// multiplies the stage that arrived, and the ring runs on from one tile of rows to the next
// without draining.
//
// How: a block is SPLIT warps over one tile of 16 rows of W at a time; each warp takes a share of
// the 64-weight blocks of K, and works through (tile, CHUNK blocks of its share) in order, the
// block's tiles one after another. A stage is those CHUNK blocks of the tile's 16 rows, copied 16
// bytes a lane at a time into the warp's slot, rows padded so that the 8 rows a half-warp reads
// fall in different banks. The multiply is nf4_gemv.cu's: a code byte becomes two bf16 codes by
// one look-up in a table kept in 32 copies, one per lane's bank; one mma.sync (16 rows of W by 8
// rows of x by 16 of K) takes 256 weights; each block's float32 sum is scaled by its absmax.
// After a tile's last stage the warps' sums meet in shared memory (two buffers, so one barrier a
// tile) and the first warp writes bf16. More than 8 rows of x take more passes over W.
//
// Rows of W past N and rows of x past M are read as the last row instead (a row of the mma's
// result depends only on its own rows of A and B, and those results are never written); blocks
// past a warp's share are neither copied nor added.
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef SPLIT
#define SPLIT 8           // warps per block, splitting K (the launch's block is SPLIT * 32)
#endif
#ifndef CHUNK
#define CHUNK 4           // 64-weight blocks of each row a stage holds (1, 2 or 4)
#endif
#ifndef STAGES
#define STAGES 3          // slots in a warp's ring: STAGES - 1 stages in flight while one is used
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2      // blocks an SM keeps
#endif
#define TILE_N 16         // rows of W per tile (the mma's M)
#define PASS_M 8          // rows of x per pass (the mma's N)
#define SCALE_BLOCK 256   // absmax values per second-level scale
#define ROW_BYTES (CHUNK * 32)
// 32 bytes of padding a row: a half-warp reads rows g = 0..3 at 8 bytes per lane, and a row
// stride of 24 or 8 words (mod 32) puts those four rows in different banks.
#define ROW_STRIDE (ROW_BYTES + 32)
#define SLOT_BYTES (TILE_N * ROW_STRIDE)
// The launch's dynamic shared memory: SPLIT * STAGES * SLOT_BYTES (61,440 bytes as built).

__constant__ uint16_t NF4_BF16[16] = {
    0xbf80, 0xbf32, 0xbf06, 0xbeca, 0xbe92, 0xbe3d, 0xbdba, 0x0000,
    0x3da3, 0x3e25, 0x3e7c, 0x3ead, 0x3ee2, 0x3f10, 0x3f39, 0x3f80};

__device__ __forceinline__ void mma_block(const uint32_t a[4], uint32_t b0, uint32_t b1, float d[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// 16 bytes from global to shared memory without passing through registers or L1.
__device__ __forceinline__ void copy16(char* to, const uint8_t* from) {
    const uint32_t address = (uint32_t)__cvta_generic_to_shared(to);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(from));
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Wait until at most STAGES - 2 of this lane's stages are still on the way: the oldest is in.
__device__ __forceinline__ void wait_oldest() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
}

__device__ __forceinline__ float block_absmax(uint32_t code, const float* absmax_code,
                                              const float* scale2, float offset, uint32_t b) {
    return __fadd_rn(__fmul_rn(absmax_code[code], __ldg(scale2 + b / SCALE_BLOCK)), offset);
}

__device__ __forceinline__ uint32_t codes_of(const char* table, uint32_t lane4, uint32_t word, int k) {
    const uint32_t v = k == 0 ? word << 7 : word >> (8 * k - 7);
    return *reinterpret_cast<const uint32_t*>(table + ((v & 0x7f80u) | lane4));
}

__device__ __forceinline__ void fill_table(uint32_t* pairs, int warp, int lane) {
    for (int v = warp; v < 256; v += SPLIT)
        pairs[v * 32 + lane] = (uint32_t)NF4_BF16[v >> 4] | ((uint32_t)NF4_BF16[v & 15] << 16);
}

// What a warp works through: its share [first, last) of K's blocks, `chunks` stages a tile.
struct Share {
    int first, last, chunks;
};

// Stage `item` of the warp (tile blockIdx.x + (item / chunks) * gridDim.x, blocks from b0).
__device__ __forceinline__ int tile_of(const Share& s, int item) { return blockIdx.x + (item / s.chunks) * gridDim.x; }
__device__ __forceinline__ int first_block(const Share& s, int item) { return s.first + (item % s.chunks) * CHUNK; }

// Copy stage `item` into `slot`: lane l copies pieces l, l + 32, ... (16 bytes each; a row's
// ROW_BYTES are 2 * CHUNK pieces, so a warp's copy instruction covers whole rows).
__device__ __forceinline__ void issue(char* slot, const uint8_t* w, const Share& s, int item, int N,
                                      int K, int lane) {
    const int tile = tile_of(s, item), b0 = first_block(s, item);
#pragma unroll
    for (int i = 0; i < CHUNK; ++i) {
        const int piece = lane + 32 * i;
        const int row = piece / (2 * CHUNK), column = piece % (2 * CHUNK);
        const int block = b0 + column / 2;
        if (block < s.last) {
            const int n = min(tile * TILE_N + row, N - 1);
            copy16(slot + row * ROW_STRIDE + column * 16,
                   w + (size_t)n * (K / 2) + (size_t)block * 32 + (column & 1) * 16);
        }
    }
}

// The multiply of one stage: its blocks of rows g and g + 8 (from the slot) by x's row, each
// block's sum scaled by its absmax and added to `acc`.
__device__ __forceinline__ void multiply(const char* slot, const Share& s, int item, int N,
                                         const uint4* x_row, const char* table, uint32_t lane4,
                                         const uint8_t* absmax_q, const float* absmax_code,
                                         const float* scale2, float offset, int blocks, float acc[4]) {
    const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    const int tile = tile_of(s, item), b0 = first_block(s, item);
    const uint32_t a_low = (uint32_t)min(tile * TILE_N + g, N - 1) * (uint32_t)blocks;
    const uint32_t a_high = (uint32_t)min(tile * TILE_N + g + 8, N - 1) * (uint32_t)blocks;
    // Lane q of a quad works out block b0 + q's two absmax values and hands them round; a
    // block past the share is read as the share's last (never past the end) and not added.
    const uint32_t mine = (uint32_t)min(b0 + q % CHUNK, s.last - 1);
    const float my_low = block_absmax(__ldg(absmax_q + a_low + mine), absmax_code, scale2, offset, a_low + mine);
    const float my_high = block_absmax(__ldg(absmax_q + a_high + mine), absmax_code, scale2, offset, a_high + mine);
#pragma unroll
    for (int u = 0; u < CHUNK; ++u) {
        const float low = __shfl_sync(0xffffffffu, my_low, u, 4);
        const float high = __shfl_sync(0xffffffffu, my_high, u, 4);
        const int block = min(b0 + u, s.last - 1);
        const uint4 xa = __ldg(x_row + 8 * block), xb = __ldg(x_row + 8 * block + 1);
        const uint2 lw = *reinterpret_cast<const uint2*>(slot + g * ROW_STRIDE + u * 32 + 8 * q);
        const uint2 hw = *reinterpret_cast<const uint2*>(slot + (g + 8) * ROW_STRIDE + u * 32 + 8 * q);
        const uint32_t xw[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
        const uint32_t lo[2] = {lw.x, lw.y};
        const uint32_t hi[2] = {hw.x, hw.y};
        float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int k = 2 * (j & 1);
            const uint32_t a[4] = {codes_of(table, lane4, lo[j >> 1], k),
                                   codes_of(table, lane4, hi[j >> 1], k),
                                   codes_of(table, lane4, lo[j >> 1], k + 1),
                                   codes_of(table, lane4, hi[j >> 1], k + 1)};
            mma_block(a, xw[2 * j], xw[2 * j + 1], d);
        }
        if (b0 + u < s.last) {
            acc[0] = fmaf(d[0], low, acc[0]);
            acc[1] = fmaf(d[1], low, acc[1]);
            acc[2] = fmaf(d[2], high, acc[2]);
            acc[3] = fmaf(d[3], high, acc[3]);
        }
    }
}

// The warps' sums of one tile added up by the first warp (in warp order, as nf4_gemv.cu adds
// them) and written as bf16.
__device__ __forceinline__ void write_tile(float (*partial)[32][4], int tile, int m0, int M, int N,
                                           __nv_bfloat16* out) {
    const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
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

extern "C" __global__ void __launch_bounds__(SPLIT * 32, MIN_BLOCKS) nf4_gemv(const __nv_bfloat16* __restrict__ x,
                                    const uint8_t* __restrict__ w,
                                    const uint8_t* __restrict__ absmax_q,
                                    const float* __restrict__ code2,
                                    const float* __restrict__ scale2, float offset,
                                    __nv_bfloat16* __restrict__ out, int M, int N, int K) {
    __shared__ uint32_t pairs[256 * 32];
    __shared__ float absmax_code[256];
    __shared__ float partial[2][SPLIT][32][4];
    extern __shared__ __align__(16) char ring[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    fill_table(pairs, warp, lane);
    for (int i = threadIdx.x; i < 256; i += blockDim.x) absmax_code[i] = code2[i];
    __syncthreads();

    const int tiles = (N + TILE_N - 1) / TILE_N;
    const int blocks = K / 64;
    const int share = (blocks + SPLIT - 1) / SPLIT;
    const Share s = {warp * share, min(warp * share + share, blocks), (share + CHUNK - 1) / CHUNK};
    const int my_tiles = blockIdx.x < tiles ? (tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int items = my_tiles * s.chunks;  // the same for every warp: the barriers line up
    char* slots = ring + warp * (STAGES * SLOT_BYTES);
    const char* table = reinterpret_cast<const char*>(pairs);
    const uint32_t lane4 = 4u * lane;

    for (int m0 = 0; m0 < M; m0 += PASS_M) {
        const int m = min(m0 + (lane >> 2), M - 1);
        const uint4* x_row = reinterpret_cast<const uint4*>(x + (size_t)m * K) + 2 * (lane & 3);
        // Fill the ring but one slot; a group is committed even when empty, so that "all but
        // STAGES - 2 groups in" always means "the oldest stage is in".
#pragma unroll
        for (int i = 0; i < STAGES - 1; ++i) {
            if (i < items) issue(slots + i * SLOT_BYTES, w, s, i, N, K, lane);
            commit();
        }
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (int item = 0; item < items; ++item) {
            wait_oldest();
            __syncwarp();  // every lane's copies of this stage are visible to the others
            // The slot freed last round takes the stage STAGES - 1 ahead.
            const int ahead = item + STAGES - 1;
            if (ahead < items) issue(slots + (ahead % STAGES) * SLOT_BYTES, w, s, ahead, N, K, lane);
            commit();
            multiply(slots + (item % STAGES) * SLOT_BYTES, s, item, N, x_row, table, lane4,
                     absmax_q, absmax_code, scale2, offset, blocks, acc);
            __syncwarp();  // the slot is read by all lanes before it is refilled
            if (item % s.chunks == s.chunks - 1) {
                const int tile = tile_of(s, item), parity = (item / s.chunks) & 1;
#pragma unroll
                for (int i = 0; i < 4; ++i) partial[parity][warp][lane][i] = acc[i];
                __syncthreads();
                if (warp == 0) write_tile(partial[parity], tile, m0, M, N, out);
#pragma unroll
                for (int i = 0; i < 4; ++i) acc[i] = 0.0f;
            }
        }
        asm volatile("cp.async.wait_all;\n" ::);
        __syncthreads();  // the next pass's first tile reuses the partial sums' buffers
    }
}
