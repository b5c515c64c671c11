// Reference kernel for the task sign_i32.
extern "C" __global__ void sign_i32(const int* __restrict__ x,
                                    int* __restrict__ y,
                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = x[i];
        y[i] = (v > 0) - (v < 0);
    }
}
