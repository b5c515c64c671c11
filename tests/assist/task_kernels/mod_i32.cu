// Reference kernel for the task mod_i32.
extern "C" __global__ void mod_i32(const int* __restrict__ x,
                                   int* __restrict__ y,
                                   int m,
                                   int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = x[i] % m;
    }
}
