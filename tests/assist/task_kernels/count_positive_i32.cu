// Reference kernel for the task count_positive_i32.
extern "C" __global__ void count_positive_i32(const int* __restrict__ x,
                                              int* __restrict__ total,
                                              int n)
{
    int s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        s += (x[i] > 0 ? 1 : 0);
    }
    __shared__ int part[256];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            part[threadIdx.x] += part[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(total, part[0]);
    }
}
