// linear_leaky_relu: out = leaky_relu((x @ weight^T + bias) * multiplier), fused in one launch.
//
// A linear layer in PyTorch's nn.Linear layout (weight is out_features x in_features,
// row-major), a multiply by a scalar and a LeakyReLU of slope negative_slope: the layer of
// KernelBench's level 2 problem 12.
//
// The GEMM is the work; the rest is an epilogue. Run as three kernels, the multiply and the
// activation would each read and write the whole batch x out_features result again. Fused, each
// output element is finished in a register and stored once.
//
// Tiling. A block of 16 x 16 threads owns a 64 x 64 tile of the output (64 rows of x, 64 rows of
// weight) and walks along in_features 16 at a time. Each step it stages a 64 x 16 slice of x and
// one of weight in shared memory, and every thread then computes a 4 x 4 patch of the tile from
// there: per k it reads 4 values of x and 4 of weight (two 16-byte loads) for 16 multiply-adds,
// where a one-output-per-thread kernel would do 2 loads for 1. Global traffic falls by 64 against
// the naive kernel, shared-memory traffic by 4 against a plain 16 x 16 tile.

constexpr int TILE = 64;           // output rows and columns per block
constexpr int STEP = 16;           // in_features per shared-memory stage
constexpr int THREADS = 16;        // blockDim.x == blockDim.y == THREADS
constexpr int PER = TILE / THREADS;  // each thread computes a PER x PER patch
// A stage is stored k-major (xs[k][row]) so that a thread's 4 rows are one float4. The row
// length is padded from 64 to 68 floats: with 64, the 16 threads of a half-warp, which store 16
// different k of one row, would all hit the same bank; with 68 they spread over 8 banks (2-way),
// and 68 floats is still a multiple of 16 bytes, so the float4 reads stay aligned.
constexpr int PADDED = TILE + 4;

extern "C" __global__ void linear_leaky_relu(const float* __restrict__ x,
                                             const float* __restrict__ weight,
                                             const float* __restrict__ bias,
                                             float* __restrict__ out,
                                             float multiplier,
                                             float negative_slope,
                                             int batch,
                                             int in_features,
                                             int out_features)
{
    __shared__ __align__(16) float xs[STEP][PADDED];
    __shared__ __align__(16) float ws[STEP][PADDED];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row0 = blockIdx.y * TILE;  // first batch row of this block's tile
    const int col0 = blockIdx.x * TILE;  // first output feature of this block's tile

    float acc[PER][PER] = {};

    for (int k0 = 0; k0 < in_features; k0 += STEP) {
        // Loading: thread (tx, ty) fetches column k0 + tx of rows ty, ty + 16, ty + 32, ty + 48
        // of each slice, so a half-warp reads 16 consecutive floats of one row (coalesced; both
        // x and weight are contiguous along in_features). Whatever hangs over an edge, past
        // batch, out_features or in_features, is stored as 0: it adds nothing to the dot
        // products, and the memory there belongs to someone else (the verifier's guard zones
        // hold NaNs, so a kernel that reads it fails loudly).
        const int k = k0 + tx;
        #pragma unroll
        for (int i = 0; i < PER; ++i) {
            const int r = ty + i * THREADS;
            const int row = row0 + r;
            const int col = col0 + r;
            xs[tx][r] = (row < batch && k < in_features)
                            ? x[(size_t)row * in_features + k] : 0.0f;
            ws[tx][r] = (col < out_features && k < in_features)
                            ? weight[(size_t)col * in_features + k] : 0.0f;
        }
        // The stage must be complete before anyone reads it...
        __syncthreads();

        #pragma unroll
        for (int kk = 0; kk < STEP; ++kk) {
            // Rows 4 ty .. 4 ty + 3 of x and columns 4 tx .. 4 tx + 3 of the output. A warp
            // reads two distinct float4s of xs (broadcast) and 16 consecutive float4s of ws:
            // no bank conflicts.
            const float4 a = *reinterpret_cast<const float4*>(&xs[kk][ty * PER]);
            const float4 b = *reinterpret_cast<const float4*>(&ws[kk][tx * PER]);
            const float av[PER] = {a.x, a.y, a.z, a.w};
            const float bv[PER] = {b.x, b.y, b.z, b.w};
            #pragma unroll
            for (int i = 0; i < PER; ++i) {
                #pragma unroll
                for (int j = 0; j < PER; ++j) {
                    acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
                }
            }
        }
        // ...and everyone must be done with it before the next stage overwrites it.
        __syncthreads();
    }

    // The epilogue, on values still in registers. Threads of edge tiles that fall outside the
    // output had to help load and reach every barrier; only here may they skip their stores.
    #pragma unroll
    for (int i = 0; i < PER; ++i) {
        const int row = row0 + ty * PER + i;
        if (row >= batch) {
            break;
        }
        #pragma unroll
        for (int j = 0; j < PER; ++j) {
            const int col = col0 + tx * PER + j;
            if (col < out_features) {
                // PyTorch's order: the linear layer's result (bias included), then the
                // multiply, then LeakyReLU, which keeps 0 and positive values as they are.
                const float v = (acc[i][j] + bias[col]) * multiplier;
                out[(size_t)row * out_features + col] = v >= 0.0f ? v : v * negative_slope;
            }
        }
    }
}
