// Reference kernel for the task conv2d_channels_f32.
extern "C" __global__ void conv2d_channels_f32(const float* __restrict__ x,
                                               const float* __restrict__ w,
                                               float* __restrict__ y,
                                               int C,
                                               int F,
                                               int H,
                                               int W)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int f = blockIdx.z;
    int oh = H - 2;
    int ow = W - 2;
    if (i < oh && j < ow) {
        float s = 0.0f;
        for (int c = 0; c < C; ++c) {
            const float* plane = x + (size_t)c * H * W;
            const float* filter = w + ((size_t)f * C + c) * 9;
            for (int a = 0; a < 3; ++a) {
                for (int b = 0; b < 3; ++b) {
                    s += plane[(size_t)(i + a) * W + j + b] * filter[a * 3 + b];
                }
            }
        }
        y[((size_t)f * oh + i) * ow + j] = s;
    }
}
