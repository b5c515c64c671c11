// Reference kernel for the task depthwise_conv2d_f32.
extern "C" __global__ void depthwise_conv2d_f32(const float* __restrict__ x,
                                                const float* __restrict__ w,
                                                float* __restrict__ y,
                                                int C,
                                                int H,
                                                int W)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.z;
    if (i < H && j < W) {
        const float* plane = x + (size_t)c * H * W;
        float s = 0.0f;
        for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) {
                int r = i + a - 1;
                int q = j + b - 1;
                if (r >= 0 && r < H && q >= 0 && q < W) {
                    s += plane[(size_t)r * W + q] * w[c * 9 + a * 3 + b];
                }
            }
        }
        y[((size_t)c * H + i) * W + j] = s;
    }
}
