// Reference kernel for the task transpose_i32.
extern "C" __global__ void transpose_i32(const int* __restrict__ x,
                                         int* __restrict__ y,
                                         int rows,
                                         int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        y[(size_t)c * rows + r] = x[(size_t)r * cols + c];
    }
}
