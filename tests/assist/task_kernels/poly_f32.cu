// Reference kernel for the task poly_f32.
extern "C" __global__ void poly_f32(const float* __restrict__ x,
                                    float* __restrict__ y,
                                    int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = (3.0f * v - 2.0f) * v + 1.0f;
    }
}
