// Kernels that fault, each in its own way.

extern "C" __global__ void far_write(float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        c[n + 10000000] = 1.0f;  // 40 MB past the end: beyond any guard zone
    }
}

extern "C" __global__ void before_start(float* c, int n)
{
    if (threadIdx.x == 3) {
        c[-100000] = 1.0f;
    }
}

__device__ int recurse(int depth)
{
    volatile char local[4096];
    local[0] = (char)depth;
    return depth == 0 ? local[0] : recurse(depth - 1) + local[0];
}

extern "C" __global__ void stack_overflow(int* out, int depth)
{
    out[threadIdx.x] = recurse(depth);
}

extern "C" __global__ void divide(const int* a, int* out, int d)
{
    out[threadIdx.x] = a[threadIdx.x] / d;
}

extern "C" __global__ void trap(int* out)
{
    if (threadIdx.x == 5) {
        __trap();
    }
    out[threadIdx.x] = 1;
}

extern "C" __global__ void chatty(int* out)
{
    if (threadIdx.x < 2) {
        printf("thread %d of block %d says hello {\"v\": 1}\n", threadIdx.x, blockIdx.x);
    }
    out[threadIdx.x] = threadIdx.x;
}

// A parameter the spec would give as int32.
extern "C" __global__ void wants_size_t(float* c, size_t n)
{
    if (threadIdx.x < n) {
        c[threadIdx.x] = 1.0f;
    }
}

extern "C" __global__ void __launch_bounds__(128) bounded(float* c)
{
    c[threadIdx.x] = 2.0f;
}

extern "C" __global__ void plain(float* c)
{
    c[threadIdx.x] = 3.0f;
}

// A pointer made from a 32-bit value.
extern "C" __global__ void small_pointer(float* c, int n)
{
    unsigned int address = 0x12345678u + (unsigned int)n;
    if (threadIdx.x == 0) {
        *(float*)(unsigned long long)address = c[0];
    }
}
