// Reference kernel for the task histogram_i32.
extern "C" __global__ void histogram_i32(const int* __restrict__ x,
                                         int* __restrict__ counts,
                                         int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&counts[x[i]], 1);
    }
}
