// saxpy: y = alpha * x + y, updated in place, with a grid-stride loop.
//
// Unlike vector_add, the grid here is capped (see [launch] in the spec) and each thread walks
// through the array in steps of the whole grid's width. One launch shape then serves any n: a
// few hundred resident blocks keep every SM busy, and no block is created only to do a handful
// of elements and exit.

extern "C" __global__ void saxpy(const float* __restrict__ x,
                                 float* __restrict__ y,
                                 float alpha,
                                 int n)
{
    int stride = gridDim.x * blockDim.x;
    // Consecutive threads still take consecutive elements on every pass of the loop, so the
    // accesses stay coalesced; only the starting point moves by `stride` each time.
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        // fmaf rounds once instead of twice (after the multiply and after the add); it is also
        // what the compiler would emit for alpha * x[i] + y[i] anyway.
        y[i] = fmaf(alpha, x[i], y[i]);
    }
}
