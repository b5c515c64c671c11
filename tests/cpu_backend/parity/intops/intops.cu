// Integer arithmetic that wraps, and the bit intrinsics. Results are written as 64-bit.
extern "C" __global__ void intops(int op, const int* x, const int* y, long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a = (i % 64 == 0) ? 0 : x[i], b = y[i];
    unsigned ua = (unsigned)a, ub = (unsigned)b;
    long long A = ((long long)a << 32) | ub, B = ((long long)b << 32) | ua;
    long long r = 0;
    switch (op) {
        case 0: r = a + b; break;
        case 1: r = a * b; break;
        case 2: r = ua * ub; break;
        case 3: r = __mulhi(a, b); break;
        case 4: r = __umulhi(ua, ub); break;
        case 5: r = __mul64hi(A, B); break;
        case 6: r = (long long)__umul64hi((unsigned long long)A, (unsigned long long)B); break;
        case 7: r = __popc(ua) * 100 + __popcll((unsigned long long)A); break;
        case 8: r = __clz(a) * 100 + __clzll(A); break;
        case 9: r = __ffs(a) * 100 + __ffsll(A); break;
        case 10: r = __brev(ua); break;
        case 11: r = (long long)__brevll((unsigned long long)A); break;
        case 12: r = __byte_perm(ua, ub, ub & 0x7777u); break;
        case 13: r = __funnelshift_l(ua, ub, ub & 63u) * 4294967296LL
                     + __funnelshift_rc(ua, ub, (ub >> 8) & 63u); break;
        case 14: r = __sad(a, b, 7u) + (long long)__usad(ua, ub, 0u) * 3; break;
        case 15: r = ua << (ub & 63u); break;  // a shift by 32 or more
        case 16: r = __hadd(a, b) * 4294967296LL + __rhadd(a, b); break;
    }
    out[i] = r;
}
