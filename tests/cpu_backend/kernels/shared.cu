// Dynamic shared memory, declared at namespace scope and inside the kernel: both names are
// the same memory, sized by the launch.

extern __shared__ float everywhere[];

extern "C" __global__ void dynamic_shared(const float* in, float* out, float* untouched)
{
    extern __shared__ __align__(16) unsigned char raw[];
    float4* quads = reinterpret_cast<float4*>(raw);
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    everywhere[t] = in[i];
    __syncthreads();
    float4 q = quads[t / 4];
    float mine = (&q.x)[t % 4];
    out[i] = mine * 2.0f + everywhere[(t + 1) % blockDim.x];
    // Nobody writes the second half: shared memory starts as 0xFF bytes, not as old data.
    untouched[i] = ((float*)everywhere)[blockDim.x + t];
}

// Static shared memory is also fresh in every block.
extern "C" __global__ void static_shared(int* out)
{
    __shared__ int slots[64];
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        slots[5] = 1234;
    }
    __syncthreads();
    out[blockIdx.x] = slots[5];
}
