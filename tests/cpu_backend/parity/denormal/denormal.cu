// Denormal (subnormal) floats through plain arithmetic, which keeps them (no --ftz), and
// through approximate intrinsics, which flush denormal inputs and results to zero.
extern "C" __global__ void denormal(int op, const float* x, const float* y, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i], tiny = a * 1e-39f, r = 0.0f;
    switch (op % 100) {
        case 0: r = tiny * b; break;
        case 1: r = tiny + b * 1e-40f; break;
        case 2: r = __logf(tiny); break;
        case 3: r = __expf(-87.5f - b * 10.0f); break;  // results below 2^-126
        case 4: r = __sinf(tiny) * 1e30f; break;
        case 5: r = sqrtf(tiny); break;
    }
    out[i] = r;
}
