// Reference kernel for the task add_i32.
extern "C" __global__ void add_i32(const int* __restrict__ a,
                                   const int* __restrict__ b,
                                   int* __restrict__ c,
                                   int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
