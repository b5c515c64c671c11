// Reference kernel for the task leaky_relu_f32.
extern "C" __global__ void leaky_relu_f32(const float* __restrict__ x,
                                          float* __restrict__ y,
                                          float slope,
                                          int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.0f ? v : slope * v;
    }
}
