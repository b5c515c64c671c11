// Reference kernel for the task row_argmax_i32.
extern "C" __global__ void row_argmax_i32(const float* __restrict__ x,
                                          int* __restrict__ idx,
                                          int rows,
                                          int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) {
        return;
    }
    const float* row = x + (size_t)r * cols;
    int best = 0;
    for (int c = 1; c < cols; ++c) {
        if (row[c] > row[best]) {
            best = c;
        }
    }
    idx[r] = best;
}
