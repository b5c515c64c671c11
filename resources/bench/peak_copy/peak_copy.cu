// A float4 copy: the kernel Kernel Studio times once per device to learn how much DRAM
// bandwidth a plain streaming kernel can reach there (the "copy" roof of every result).
//
// One thread copies one 16-byte vector, so loads and stores are as wide and as coalesced as
// the hardware allows. The last n % 4 elements, if any, are copied one by one by the threads
// whose vector would start past the end.

extern "C" __global__ void copy_float4(const float* __restrict__ src,
                                       float* __restrict__ dst,
                                       int n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long first = 4 * i;
    if (first + 3 < n) {
        reinterpret_cast<float4*>(dst)[i] = reinterpret_cast<const float4*>(src)[i];
    } else {
        for (long long j = first; j < n && j < first + 3; ++j) {
            dst[j] = src[j];
        }
    }
}
