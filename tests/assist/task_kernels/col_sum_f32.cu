// Reference kernel for the task col_sum_f32.
extern "C" __global__ void col_sum_f32(const float* __restrict__ x,
                                       float* __restrict__ y,
                                       int rows,
                                       int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) {
        return;
    }
    float s = 0.0f;
    for (int r = 0; r < rows; ++r) {
        s += x[(size_t)r * cols + c];
    }
    y[c] = s;
}
