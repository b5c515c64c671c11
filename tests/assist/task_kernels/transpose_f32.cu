// Reference kernel for the task transpose_f32.
extern "C" __global__ void transpose_f32(const float* __restrict__ x,
                                         float* __restrict__ y,
                                         int rows,
                                         int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        y[(size_t)c * rows + r] = x[(size_t)r * cols + c];
    }
}
