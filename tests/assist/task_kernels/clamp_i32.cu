// Reference kernel for the task clamp_i32.
extern "C" __global__ void clamp_i32(const int* __restrict__ x,
                                     int* __restrict__ y,
                                     int lo,
                                     int hi,
                                     int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = x[i];
        y[i] = v < lo ? lo : (v > hi ? hi : v);
    }
}
