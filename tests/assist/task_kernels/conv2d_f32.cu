// Reference kernel for the task conv2d_f32.
extern "C" __global__ void conv2d_f32(const float* __restrict__ x,
                                      const float* __restrict__ w,
                                      float* __restrict__ y,
                                      int H,
                                      int W)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < H - 2 && j < W - 2) {
        float s = 0.0f;
        for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) {
                s += x[(size_t)(i + a) * W + j + b] * w[a * 3 + b];
            }
        }
        y[(size_t)i * (W - 2) + j] = s;
    }
}
