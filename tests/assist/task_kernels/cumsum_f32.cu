// Reference kernel for the task cumsum_f32.
extern "C" __global__ void cumsum_f32(const float* __restrict__ x,
                                      float* __restrict__ y,
                                      int rows,
                                      int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) {
        return;
    }
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        s += x[(size_t)r * cols + c];
        y[(size_t)r * cols + c] = s;
    }
}
