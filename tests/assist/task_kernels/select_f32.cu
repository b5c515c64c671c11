// Reference kernel for the task select_f32.
extern "C" __global__ void select_f32(const int* __restrict__ mask,
                                      const float* __restrict__ a,
                                      const float* __restrict__ b,
                                      float* __restrict__ y,
                                      int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = mask[i] > 0 ? a[i] : b[i];
    }
}
