// Reference kernel for the task cumsum_i32.
extern "C" __global__ void cumsum_i32(const int* __restrict__ x,
                                      int* __restrict__ y,
                                      int rows,
                                      int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) {
        return;
    }
    int s = 0;
    for (int c = 0; c < cols; ++c) {
        s += x[(size_t)r * cols + c];
        y[(size_t)r * cols + c] = s;
    }
}
