// Reference kernel for the task row_min_i32.
extern "C" __global__ void row_min_i32(const int* __restrict__ x,
                                       int* __restrict__ y,
                                       int rows,
                                       int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) {
        return;
    }
    int m = x[(size_t)r * cols];
    for (int c = 1; c < cols; ++c) {
        int v = x[(size_t)r * cols + c];
        m = v < m ? v : m;
    }
    y[r] = m;
}
