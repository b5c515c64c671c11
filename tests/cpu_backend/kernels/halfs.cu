// Half and bfloat16 conversions and arithmetic.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void convert(const float* x, unsigned short* h_bits,
                                   unsigned short* b_bits, float* h_back, float* b_back,
                                   float* h_sum, float* b_product, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    __half h = __float2half(x[i]);
    __nv_bfloat16 b = __float2bfloat16(x[i]);
    h_bits[i] = __half_as_ushort(h);
    b_bits[i] = __bfloat16_as_ushort(b);
    h_back[i] = __half2float(h);
    b_back[i] = __bfloat162float(b);
    h_sum[i] = __half2float(__hadd(h, __float2half(1.0f)));
    b_product[i] = __bfloat162float(b * __float2bfloat16(3.0f));
}

// Half-precision scalars as parameters and half2 arithmetic.
extern "C" __global__ void axpy_half(const __half* x, __half* y, __half alpha, int n)
{
    int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i + 1 < n) {
        __half2 xy = __halves2half2(x[i], x[i + 1]);
        __half2 yy = __halves2half2(y[i], y[i + 1]);
        __half2 r = __hfma2(__half2half2(alpha), xy, yy);
        y[i] = __low2half(r);
        y[i + 1] = __high2half(r);
    } else if (i < n) {
        y[i] = __hfma(alpha, x[i], y[i]);
    }
}
