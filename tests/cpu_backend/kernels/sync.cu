// Barrier semantics of the CPU emulation.

// out_barrier[i] = in[(i + 1) % n] through shared memory with a barrier, out_race the same
// without one, and the results of __syncthreads_count/_and/_or.
extern "C" __global__ void rotate(const float* in, float* out_barrier, float* out_race,
                                  int* votes)
{
    __shared__ float with_barrier[256];
    __shared__ float without_barrier[256];
    int i = threadIdx.x;
    int n = blockDim.x;
    with_barrier[i] = in[i];
    __syncthreads();
    out_barrier[i] = with_barrier[(i + 1) % n];

    without_barrier[i] = in[i];
    out_race[i] = without_barrier[(i + 1) % n];  // no barrier: the neighbour has not run yet

    int count = __syncthreads_count(in[i] > 0.0f);
    int all = __syncthreads_and(in[i] > -1000.0f);
    int any = __syncthreads_or(i == 7);
    int none = __syncthreads_or(0);
    if (i == 0) {
        votes[0] = count;
        votes[1] = all;
        votes[2] = any;
        votes[3] = none;
    }
}

// Threads that return early no longer count at later barriers (as on sm_70 and later).
extern "C" __global__ void early_exit(const int* in, int* out, int keep)
{
    __shared__ int values[256];
    int i = threadIdx.x;
    if (i >= keep) {
        return;
    }
    values[i] = in[i] * 2;
    __syncthreads();
    out[i] = values[keep - 1 - i];
    __syncthreads();
}

// Lanes 0-15 wait in a full-warp shuffle while lanes 16-31 wait at a barrier: neither can
// ever complete.
extern "C" __global__ void deadlock(int* out)
{
    int lane = threadIdx.x;
    if (lane < 16) {
        out[lane] = __shfl_sync(0xffffffffu, lane, 0);
    } else {
        __syncthreads();
    }
}

// __nanosleep gives way to the other threads of the block, so a flag set by a later thread
// is seen by a thread that polls it.
extern "C" __global__ void polling(int* out)
{
    __shared__ volatile int flag;
    if (threadIdx.x == 0) {
        flag = 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int spins = 0;
        while (flag == 0) {
            __nanosleep(100);
            ++spins;
        }
        out[0] = spins > 0;
    } else if (threadIdx.x == blockDim.x - 1) {
        flag = 1;
    }
}
