// half and bfloat16 arithmetic, scalar and paired (n is even).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void halves(int op, const __half* x, const __half* y, __half* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half a = x[i], b = y[i], r = a;
    int p = i / 2;
    switch (op) {
        case 0: r = __hadd(a, b); break;
        case 1: r = __hmul(a, b); break;
        case 2: r = __hfma(a, b, a); break;
        case 3: r = __hdiv(a, b); break;
        case 4: r = hsqrt(__habs(a)); break;
        case 5: r = __hsub(__hmax(a, b), __hmin(a, b)); break;
        case 6: {
            __half2 q = __hfma2(((const __half2*)x)[p], ((const __half2*)y)[p],
                                ((const __half2*)x)[p]);
            r = (i % 2) ? __high2half(q) : __low2half(q);
            break;
        }
    }
    out[i] = r;
}

extern "C" __global__ void bhalves(int op, const __nv_bfloat16* x, const __nv_bfloat16* y,
                                   __nv_bfloat16* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 a = x[i], b = y[i], r = a;
    int p = i / 2;
    switch (op) {
        case 0: r = __hadd(a, b); break;
        case 1: r = __hmul(a, b); break;
        case 2: r = __hfma(a, b, a); break;
        case 3: {
            __nv_bfloat162 q = __hmul2(((const __nv_bfloat162*)x)[p],
                                       ((const __nv_bfloat162*)y)[p]);
            r = (i % 2) ? __high2bfloat16(q) : __low2bfloat16(q);
            break;
        }
    }
    out[i] = r;
}
