// Plain arithmetic whose result depends on the compiler options (--use_fast_math, --ftz,
// --prec-div, --prec-sqrt), one entry per op as in the other groups.
extern "C" __global__ void options(int op, const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], r = 0.0f;
    switch (op % 100) {
        case 0: r = a / (b * 1e30f); break;  // divisors above 2^126
        case 1: r = (a * 1e-39f) * b; break;  // denormal results
        case 2: r = sqrtf(a); break;
        case 3: r = expf(a); break;
    }
    out[i] = r;
}
