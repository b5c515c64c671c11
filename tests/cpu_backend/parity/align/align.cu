// Vector and wide loads at an offset `shift` (in elements of the buffer's own type): aligned
// when shift is a multiple of the vector, misaligned (a GPU fault) otherwise.
extern "C" __global__ void align(int op, const float* x, float* out, int shift, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* base = x + shift;
    float r = 0.0f;
    switch (op) {
        case 0: { float2 v = ((const float2*)base)[i]; r = v.x + v.y; break; }
        case 1: { float4 v = ((const float4*)base)[i]; r = v.x + v.y + v.z + v.w; break; }
        case 2: r = (float)((const double*)base)[i]; break;
        case 3: r = (float)*(const int*)((const char*)base + 2 + 4 * i); break;
    }
    out[i] = r;
}
