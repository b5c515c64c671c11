// Many barrier phases in one block: the scheduler's queue must not grow with them.
extern "C" __global__ void many_barriers(int* out, int phases)
{
    __shared__ int value[256];
    value[threadIdx.x] = 0;
    __syncthreads();
    for (int p = 0; p < phases; ++p) {
        int next = value[(threadIdx.x + 1) % blockDim.x] + 1;
        __syncthreads();
        value[threadIdx.x] = next;
        __syncthreads();
    }
    out[threadIdx.x] = value[threadIdx.x];
}
