// NF4 dequantize-and-multiply for decoding on CUDA cores: out[m][n] = sum over k of x[m][k] *
// W[n][k], with W
// stored as bitsandbytes stores a 4-bit layer loaded with double quantization (the app's NF4):
//   - two 4-bit codes per byte, the even element in the high nibble, each an index into NF4;
//   - each run of 64 consecutive weights (K is a multiple of 64) scaled by its absmax, and the
//     absmax values themselves quantized to 8 bits: absmax[b] = code2[q[b]] * scale2[b / 256]
//     + offset, computed in float32 as bitsandbytes computes it.
// The contract (shared with nf4_gemv.cu, the tensor-core kernel, and the reference): the NF4
// codes are used rounded to bfloat16, and each block's float32 sum is scaled by its absmax.
//
// Built for a few rows of x (decode steps, batch 1 to 8): the weights are the traffic, so each
// warp streams one row of W once, 16 bytes per lane per load with the next load already in
// flight, and applies it to every row of x while the codes sit in registers. More than MAX_M
// rows of x take more passes over W.
#include <cuda_bf16.h>
#include <stdint.h>

#ifndef ROWS_PER_BLOCK
#define ROWS_PER_BLOCK 4  // warps per block, one output column each
#endif
#define MAX_M 8           // rows of x served by one pass over the weights
#define SCALE_BLOCK 256   // absmax values per second-level scale

// bitsandbytes' NF4 code table (the quantiles of a normal distribution, scaled to [-1, 1]),
// rounded to bfloat16 where it is read.
__constant__ float NF4_CODE[16] = {
    -1.0f, -0.6961928009986877f, -0.5250730514526367f, -0.39491748809814453f,
    -0.28444138169288635f, -0.18477343022823334f, -0.09105003625154495f, 0.0f,
    0.07958029955625534f, 0.16093020141124725f, 0.24611230194568634f, 0.33791524171829224f,
    0.44070982933044434f, 0.5626170039176941f, 0.7229568362236023f, 1.0f};

// The two bf16 values of a 32-bit word as floats: the lower address (low half) first.
__device__ __forceinline__ float low_bf16(uint32_t word) { return __uint_as_float(word << 16); }
__device__ __forceinline__ float high_bf16(uint32_t word) { return __uint_as_float(word & 0xffff0000u); }

// The eight codes of four packed bytes: one table look-up per byte gives both of its codes.
__device__ __forceinline__ void unpack8(uint32_t packed, const float2* pairs, float* codes) {
#pragma unroll
    for (int t = 0; t < 4; ++t) {
        const float2 both = pairs[(packed >> (8 * t)) & 0xffu];
        codes[2 * t] = both.x;
        codes[2 * t + 1] = both.y;
    }
}

// Eight codes times eight bf16 values of x, unscaled.
__device__ __forceinline__ float dot8(const float* codes, uint4 xs) {
    const uint32_t words[4] = {xs.x, xs.y, xs.z, xs.w};
    float sum = 0.0f;
#pragma unroll
    for (int t = 0; t < 4; ++t) {
        sum = fmaf(codes[2 * t], low_bf16(words[t]), sum);
        sum = fmaf(codes[2 * t + 1], high_bf16(words[t]), sum);
    }
    return sum;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// At most 64 registers a thread (8 blocks an SM): enough loads in flight to keep memory busy.
extern "C" __global__ void __launch_bounds__(ROWS_PER_BLOCK * 32, 8) nf4_gemv(const __nv_bfloat16* __restrict__ x,
                                    const uint8_t* __restrict__ w,
                                    const uint8_t* __restrict__ absmax_q,
                                    const float* __restrict__ code2,
                                    const float* __restrict__ scale2, float offset,
                                    __nv_bfloat16* __restrict__ out, int M, int N, int K) {
    // Tables in shared memory, as lanes look up different entries at once: both codes of every
    // byte value, and the second-level code of the absmax values.
    __shared__ float2 pairs[256];
    __shared__ float absmax_code[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
        pairs[i] = make_float2(__bfloat162float(__float2bfloat16(NF4_CODE[i >> 4])),
                               __bfloat162float(__float2bfloat16(NF4_CODE[i & 15])));
        absmax_code[i] = code2[i];
    }
    __syncthreads();

    const int lane = threadIdx.x & 31;
    const int n = blockIdx.x * ROWS_PER_BLOCK + (threadIdx.x >> 5);
    if (n >= N) return;
    const int chunks = K / 32;  // 16-byte pieces of a row: half a quantization block each
    const uint4* row = reinterpret_cast<const uint4*>(w + (size_t)n * (K / 2));
    const size_t first_block = (size_t)n * (K / 64);
    const uint4 none = make_uint4(0, 0, 0, 0);

    for (int m0 = 0; m0 < M; m0 += MAX_M) {
        float acc[MAX_M];
#pragma unroll
        for (int i = 0; i < MAX_M; ++i) acc[i] = 0.0f;
        uint4 next = lane < chunks ? __ldg(row + lane) : none;
        for (int c = lane; c < chunks; c += 32) {
            const uint4 packed = next;
            if (c + 32 < chunks) next = __ldg(row + c + 32);  // in flight while this one is used
            const size_t b = first_block + (c >> 1);
            // The absmax exactly as bitsandbytes dequantizes it: a product, then a sum, each
            // rounded (no fused multiply-add).
            const float scale = __fadd_rn(__fmul_rn(absmax_code[__ldg(absmax_q + b)],
                                                    __ldg(scale2 + b / SCALE_BLOCK)), offset);
            const uint32_t words[4] = {packed.x, packed.y, packed.z, packed.w};
            float part[MAX_M];
#pragma unroll
            for (int i = 0; i < MAX_M; ++i) part[i] = 0.0f;
            // A quarter of the piece at a time, for every row of x: eight codes live at once.
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                float codes[8];
                unpack8(words[q], pairs, codes);
#pragma unroll
                for (int i = 0; i < MAX_M; ++i) {
                    if (m0 + i < M) {
                        const uint4* xs = reinterpret_cast<const uint4*>(x + (size_t)(m0 + i) * K + 32 * c);
                        part[i] += dot8(codes, __ldg(xs + q));
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < MAX_M; ++i) acc[i] = fmaf(part[i], scale, acc[i]);
        }
#pragma unroll
        for (int i = 0; i < MAX_M; ++i) {
            const float total = warp_sum(acc[i]);
            if (lane == 0 && m0 + i < M) out[(size_t)(m0 + i) * N + n] = __float2bfloat16(total);
        }
    }
}
