// Kernels for test_gpu_semantics.py: where x86 and a GPU part ways.
#include <cuda_fp16.h>

extern "C" __global__ void to_int(const float* x, int* rz, int* rn, unsigned* u, long long* ll,
                                  int* h, int n) {
    int i = threadIdx.x;
    if (i >= n) return;
    rz[i] = __float2int_rz(x[i]);
    rn[i] = __float2int_rn(x[i]);
    u[i] = __float2uint_rz(x[i]);
    ll[i] = __float2ll_rd(x[i]);
    h[i] = __half2int_rn(__float2half(x[i]));
}

extern "C" __global__ void implicit_cast(const float* x, int* o) {
    o[threadIdx.x] = (int)x[threadIdx.x];
}

extern "C" __global__ void fast(const float* x, const float* y, float* div, float* ex, float* s) {
    int i = threadIdx.x;
    div[i] = __fdividef(x[i], y[i]);
    ex[i] = __expf(x[i]);
    s[i] = __sinf(y[i]);
}

extern "C" __global__ void rounding(const float* a, const float* b, float* up, float* down,
                                   float* zero, float* near) {
    int i = threadIdx.x;
    up[i] = __fdiv_ru(a[i], b[i]);
    down[i] = __fdiv_rd(a[i], b[i]);
    zero[i] = __fmul_rz(a[i], b[i]);
    near[i] = __fadd_rn(a[i], b[i]);
}

extern "C" __global__ void misaligned_float2(const float* x, float* o, int offset) {
    const float2* p = reinterpret_cast<const float2*>(x + offset);
    o[threadIdx.x] = p[threadIdx.x].x;
}

extern "C" __global__ void misaligned_double(const char* x, double* o, int offset) {
    o[threadIdx.x] = *reinterpret_cast<const double*>(x + offset + 8 * threadIdx.x);
}

extern "C" __global__ void misaligned_store_int4(int* x, int offset) {
    reinterpret_cast<int4*>(x + offset)[threadIdx.x] = make_int4(1, 2, 3, 4);
}

extern "C" __global__ void wide_shift(const int* x, unsigned* o) {
    o[threadIdx.x] = 1u << x[threadIdx.x];
}
