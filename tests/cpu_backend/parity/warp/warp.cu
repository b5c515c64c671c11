// Warp shuffles, votes and reductions; every warp is full (n is a multiple of 32).
extern "C" __global__ void warp(int op, const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned all = 0xffffffffu;
    int v = x[i], r = 0;
    switch (op) {
        case 0: r = __shfl_sync(all, v, 5); break;
        case 1: r = __shfl_sync(all, v, 3, 8); break;
        case 2: r = __shfl_up_sync(all, v, 3, 16); break;
        case 3: r = __shfl_down_sync(all, v, 5); break;
        case 4:
            r = v;
            for (int m = 16; m > 0; m >>= 1) r += __shfl_xor_sync(all, r, m);
            break;
        case 5: r = __shfl_xor_sync(all, v, 9, 16); break;
        case 6: r = (int)__ballot_sync(all, v > 0); break;
        case 7: r = __any_sync(all, v > 990) * 2 + __all_sync(all, v > -1000); break;
        case 8: r = (int)__activemask(); break;
        case 9: r = (int)__reduce_add_sync(all, (unsigned)v); break;
        case 10: r = __reduce_min_sync(all, v) + 3 * __reduce_max_sync(all, v); break;
        case 11: r = (int)__match_any_sync(all, v & 3); break;
        case 12: r = (int)__reduce_or_sync(all, (unsigned)v & 0xff0u); break;
    }
    out[i] = r;
}
