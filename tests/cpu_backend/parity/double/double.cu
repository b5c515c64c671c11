// Double-precision rounding-mode intrinsics.
extern "C" __global__ void dbl(int op, const double* x, const double* y, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = x[i], b = y[i], r = 0.0;
    switch (op) {
        case 0: r = __ddiv_rn(a, b); break;
        case 1: r = __dsqrt_rn(a); break;
        case 2: r = __dadd_rz(a, b * 1e-9); break;
        case 3: r = __dmul_ru(a, b); break;
        case 4: r = __fma_rd(a, b, -a); break;
    }
    out[i] = r;
}
