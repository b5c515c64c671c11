// Reference kernel for the task attention_softmax_f32.
extern "C" __global__ void attention_softmax_f32(const float* __restrict__ Q,
                                                 const float* __restrict__ K,
                                                 float* __restrict__ P,
                                                 int L,
                                                 int D,
                                                 float scale)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= L) {
        return;
    }
    const float* q = Q + (size_t)r * D;
    float m = -INFINITY;
    for (int c = 0; c < L; ++c) {
        float s = 0.0f;
        for (int d = 0; d < D; ++d) {
            s += q[d] * K[(size_t)c * D + d];
        }
        P[(size_t)r * L + c] = scale * s;
        m = fmaxf(m, scale * s);
    }
    float total = 0.0f;
    for (int c = 0; c < L; ++c) {
        float e = expf(P[(size_t)r * L + c] - m);
        P[(size_t)r * L + c] = e;
        total += e;
    }
    for (int c = 0; c < L; ++c) {
        P[(size_t)r * L + c] /= total;
    }
}
