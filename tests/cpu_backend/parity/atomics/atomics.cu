// Atomics on every type, each thread i working on slot i % 16 of an accumulator. Every
// combination used has an order-independent result (integer-valued half and bfloat16 sums).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void atomics(int op, const int* x, int* ai, unsigned* au, long long* al,
                                   unsigned long long* aul, float* af, double* ad, __half* ah,
                                   __nv_bfloat16* ab, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = x[i], s = i % 16;
    switch (op) {
        case 0: atomicAdd(ai + s, v - 4); break;
        case 1: atomicAdd(au + s, (unsigned)v << 28); break;
        case 2: atomicAdd(aul + s, (unsigned long long)v << 60); break;
        case 3: atomicAdd(af + s, v * 0.375f); break;
        case 4: atomicAdd(ad + s, v * 0.1); break;
        case 5: atomicAdd((__half2*)ah + s, __halves2half2(__int2half_rn(v), __int2half_rn(-v)));
                break;
        case 6: atomicAdd((__nv_bfloat162*)ab + s,
                          __halves2bfloat162(__int2bfloat16_rn(v), __int2bfloat16_rn(2 * v)));
                break;
        case 7: atomicAdd(ah + s, __int2half_rn(v)); break;
        case 8: atomicSub(ai + s, v); atomicSub(au + s, (unsigned)v); break;
        case 9: if (i < 16) au[i] = (unsigned)atomicExch(ai + i, v) + 1u; break;
        case 10: atomicMin(ai + s, v - 4); atomicMax(au + s, (unsigned)v * 0x20000001u); break;
        case 11: atomicMin(al + s, (long long)(v - 4) << 40);
                 atomicMax(aul + s, (unsigned long long)v << 61); break;
        case 12: atomicAnd(au + s, ~(1u << v)); atomicOr(ai + s, 1 << (v + 8));
                 atomicXor(aul + s, 1ull << (v * 7)); break;
        case 13: atomicInc(au + s, 5u); break;
        case 14: atomicDec(au + s, 5u); break;
        case 15: {  // an add built from compare-and-swap, 32 and 64 bits
            int seen = ai[s], want;
            do { want = seen; seen = atomicCAS(ai + s, want, want + v); } while (seen != want);
            unsigned long long old = aul[s], expect;
            do { expect = old; old = atomicCAS(aul + s, expect, expect * 3); } while (old != expect);
            break;
        }
    }
}
