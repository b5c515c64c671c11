// transpose: y[c, r] = x[r, c] for a rows x cols matrix, through a shared-memory tile.
//
// A naive transpose reads rows and writes columns: one of the two is always strided, and a
// strided warp access touches 32 separate memory segments instead of one. Staging a 32 x 32
// tile in shared memory fixes that: the block reads the tile row by row (coalesced), then
// writes it out row by row of the output (coalesced again), and the reshuffling in between
// happens in fast on-chip memory.

constexpr int TILE = 32;  // blockDim.x must equal TILE; blockDim.y may be any divisor of it

extern "C" __global__ void transpose(const float* __restrict__ x,
                                     float* __restrict__ y,
                                     int rows,
                                     int cols)
{
    // The +1 column of padding is the point of this kernel. Shared memory has 32 banks, each
    // 4 bytes wide; without padding, element [r][c] sits in bank c % 32, so reading a column
    // of the tile (all threads on the same c, different r) hits one bank 32 times over and
    // the accesses queue up one after another. With rows 33 floats long, [r][c] sits in bank
    // (r + c) % 32 and a column spreads over all 32 banks.
    __shared__ float tile[TILE][TILE + 1];

    // This block's tile starts at row blockIdx.y * TILE, column blockIdx.x * TILE of x.
    int col = blockIdx.x * TILE + threadIdx.x;
    int row0 = blockIdx.y * TILE;

    // A block of TILE x blockDim.y threads covers the tile in TILE / blockDim.y passes: fewer
    // threads each doing more work, which leaves more registers and blocks per SM to hide
    // memory latency. The bounds checks cover matrices that are not multiples of 32.
    for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
        int row = row0 + r;
        if (row < rows && col < cols) {
            tile[r][threadIdx.x] = x[(size_t)row * cols + col];
        }
    }

    // Every element of the tile must be loaded before any thread reads another thread's slot.
    __syncthreads();

    // Now swap roles: threadIdx.x walks along a row of y, which is a column of the tile.
    int out_col = row0 + threadIdx.x;            // a row index of x
    int out_row0 = blockIdx.x * TILE;            // a column index of x
    for (int r = threadIdx.y; r < TILE; r += blockDim.y) {
        int out_row = out_row0 + r;
        if (out_row < cols && out_col < rows) {
            y[(size_t)out_row * rows + out_col] = tile[threadIdx.x][r];
        }
    }
}
