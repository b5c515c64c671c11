// Atomics from many blocks at once (blocks run in parallel on the CPU's cores).

extern "C" __global__ void atomics(int* i32, unsigned int* u32, unsigned long long* u64,
                                   float* f32, double* f64, int repeat)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < repeat; ++k) {
        atomicAdd(&i32[0], 1);
        atomicSub(&i32[1], 2);
        atomicAdd(&u32[0], 3u);
        atomicAdd(&u64[0], 1ull << 33);
        atomicAdd(&f32[0], 1.0f);
        atomicAdd(&f64[0], 0.5);
    }
    atomicMax(&i32[2], t);
    atomicMin(&i32[3], -t);
    atomicMax(&u32[1], (unsigned int)t * 3u);
    atomicMin(&u64[1], (unsigned long long)t + 5ull);
    atomicOr(&u32[2], 1u << (t % 32));
    atomicAnd(&u32[3], ~(1u << (t % 17)));
    atomicXor(&u32[4], 1u << (t % 8));
    atomicExch(&i32[4], 7);
    atomicInc(&u32[5], 99u);
    atomicMax(&f32[1], (float)t);
    atomicMin(&f64[1], -(double)t);
    atomicAdd(&u64[2], (unsigned long long)t);
    // A lock made of atomicCAS, guarding a plain read-modify-write.
    while (atomicCAS(&i32[5], 0, 1) != 0) {
    }
    i32[6] += 1;
    __threadfence();
    atomicExch(&i32[5], 0);
}

extern "C" __global__ void vector_atomics(float4* sum4, float2* sum2)
{
    atomicAdd(sum4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
    atomicAdd_block(sum2, make_float2(0.5f, -1.0f));
}
