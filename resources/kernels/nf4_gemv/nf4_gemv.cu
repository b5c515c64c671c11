// NF4 dequantize-and-multiply for decoding: out[m][n] = sum over k of x[m][k] * W[n][k], where W
// is stored as bitsandbytes stores it at blocksize 64: two 4-bit codes per byte (the even element
// in the high nibble), each code an index into the NF4 table, each run of 64 consecutive weights
// of a row scaled by its own float32 absmax. K must be a multiple of 64.
//
// Built for a few rows of x (decode steps, batch 1 to 8): the weights are the traffic, so each
// warp streams one row of W once, 16 bytes per lane per load, and applies it to every row of x
// while the codes sit in registers. More than MAX_M rows of x take more passes over W.
#include <cuda_bf16.h>
#include <stdint.h>

#define ROWS_PER_BLOCK 4  // warps per block, one output column each
#define MAX_M 8           // rows of x served by one pass over the weights

// bitsandbytes' NF4 code table (the quantiles of a normal distribution, scaled to [-1, 1]).
__constant__ float NF4_CODE[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};

// The two bf16 values of a 32-bit word as floats: the lower address (low half) first.
__device__ __forceinline__ float low_bf16(uint32_t word) { return __uint_as_float(word << 16); }
__device__ __forceinline__ float high_bf16(uint32_t word) { return __uint_as_float(word & 0xffff0000u); }

// 32 consecutive codes (16 bytes) times 32 consecutive bf16 values of x, unscaled.
__device__ __forceinline__ float dot32(const float* codes, const uint4* xs) {
    float sum = 0.0f;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        const uint4 v = __ldg(xs + q);
        const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int t = 0; t < 4; ++t) {
            sum = fmaf(codes[8 * q + 2 * t], low_bf16(words[t]), sum);
            sum = fmaf(codes[8 * q + 2 * t + 1], high_bf16(words[t]), sum);
        }
    }
    return sum;
}

// The 32 codes of 16 packed bytes, looked up in the table: high nibble first in each byte.
__device__ __forceinline__ void unpack32(uint4 packed, const float* table, float* codes) {
    const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
#pragma unroll
    for (int j = 0; j < 16; ++j) {
        const uint32_t byte = (words[j >> 2] >> (8 * (j & 3))) & 0xffu;
        codes[2 * j] = table[byte >> 4];
        codes[2 * j + 1] = table[byte & 0xfu];
    }
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

extern "C" __global__ void nf4_gemv(const __nv_bfloat16* __restrict__ x,
                                    const uint8_t* __restrict__ w,
                                    const float* __restrict__ absmax,
                                    __nv_bfloat16* __restrict__ out, int M, int N, int K) {
    // The table in shared memory: lanes look up different codes at once, which constant
    // memory would serialise.
    __shared__ float table[16];
    if (threadIdx.x < 16) table[threadIdx.x] = NF4_CODE[threadIdx.x];
    __syncthreads();

    const int lane = threadIdx.x & 31;
    const int n = blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (n >= N) return;
    const int chunks = K / 32;  // 16-byte pieces of a row: half a quantization block each
    const uint4* row = reinterpret_cast<const uint4*>(w + (size_t)n * (K / 2));
    const float* scales = absmax + (size_t)n * (K / 64);

    for (int m0 = 0; m0 < M; m0 += MAX_M) {
        float acc[MAX_M];
#pragma unroll
        for (int i = 0; i < MAX_M; ++i) acc[i] = 0.0f;
        for (int c = lane; c < chunks; c += 32) {
            float codes[32];
            unpack32(__ldg(row + c), table, codes);
            const float scale = __ldg(scales + (c >> 1));
#pragma unroll
            for (int i = 0; i < MAX_M; ++i) {
                if (m0 + i < M) {
                    const uint4* xs = reinterpret_cast<const uint4*>(x + (size_t)(m0 + i) * K + 32 * c);
                    acc[i] = fmaf(dot32(codes, xs), scale, acc[i]);
                }
            }
        }
#pragma unroll
        for (int i = 0; i < MAX_M; ++i) {
            const float total = warp_sum(acc[i]);
            if (lane == 0 && m0 + i < M) out[(size_t)(m0 + i) * N + n] = __float2bfloat16(total);
        }
    }
}
