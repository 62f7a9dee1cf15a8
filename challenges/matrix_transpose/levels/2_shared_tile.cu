// expect: ACCEPTED
// Level 2 — a 32×32 tile turned in shared memory.
//
// Over level 1: a block of 32×32 threads owns a 32×32 tile of the input. Each warp reads one row of
// the tile, 32 consecutive floats of an input row (coalesced, as in level 1), into shared memory.
// After a barrier, each warp writes one row of the output tile, which is a column of the input tile:
// it reads the tile down a column, tile[x][y], and stores 32 consecutive floats of an output row.
// Both sides of global memory now move whole lines; the transposition itself happens in shared
// memory, where reading across rows costs no extra traffic.
//
// That column read has a cost of its own, which level 3 removes: see there.
#include <cuda_runtime.h>

constexpr int TILE = 32;

__global__ void transpose_shared(const float* input, float* output, int rows, int cols) {
    __shared__ float tile[TILE][TILE];
    // One block per tile, numbered along the tile rows (see level 1 for why the grid is 1-D).
    unsigned column_tiles = (unsigned)(cols - 1) / TILE + 1;
    unsigned first_row = blockIdx.x / column_tiles * TILE;  // the tile's first input row...
    unsigned first_col = blockIdx.x % column_tiles * TILE;  // ...and first input column

    unsigned row = first_row + threadIdx.y, col = first_col + threadIdx.x;
    if (row < (unsigned)rows && col < (unsigned)cols)
        tile[threadIdx.y][threadIdx.x] = input[(size_t)row * cols + col];
    __syncthreads();  // the whole tile is loaded before any thread reads another thread's element

    // Output row first_col + y, output column first_row + x: x still runs along memory, now the
    // output's. The element there is input[first_row + x][first_col + y] = tile[x][y].
    unsigned out_row = first_col + threadIdx.y, out_col = first_row + threadIdx.x;
    if (out_row < (unsigned)cols && out_col < (unsigned)rows)
        output[(size_t)out_row * rows + out_col] = tile[threadIdx.x][threadIdx.y];
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    unsigned tiles = ((unsigned)(cols - 1) / TILE + 1) * ((unsigned)(rows - 1) / TILE + 1);
    transpose_shared<<<tiles, dim3(TILE, TILE)>>>(input, output, rows, cols);
}
