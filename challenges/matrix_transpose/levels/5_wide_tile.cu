// expect: ACCEPTED
// Level 5 — 64×64 tiles, 32×16 threads, eight elements each.
//
// Over level 4: a block moves a 64×64 tile instead of a 32×32 one, with 32×16 = 512 threads, each
// taking two columns (x and x + 32) of four rows (y, y + 16, y + 32, y + 48). What that buys:
// - Longer runs in memory. A warp still reads or writes 32 consecutive floats, but a block now covers
//   64 consecutive floats of each row it touches, in input and output alike: half as many separate
//   stretches of memory per byte moved, which the DRAM serves with fewer row switches. On rows that do
//   not start on a 128-byte boundary (an odd number of columns), a run of 64 floats straddles one
//   extra line per 256 bytes instead of one per 128.
// - Eight independent loads in flight per thread, all issued into registers before any is stored to
//   shared memory, and a quarter as many blocks to start and retire.
// The tile is padded to 65 columns, as in level 3, so a warp reading a tile column (64 words apart
// without padding) hits 32 different banks. 64 × 65 × 4 bytes = 16.6 KB of shared memory per block:
// four blocks of 512 threads fill an H100/H200 multiprocessor's 2,048 threads with 67 KB.
#include <cuda_runtime.h>

constexpr int TILE = 64;
constexpr int THREADS_X = 32;  // a warp across the tile's columns
constexpr int THREADS_Y = 16;
constexpr int COLS_PER_THREAD = TILE / THREADS_X;  // 2
constexpr int ROWS_PER_THREAD = TILE / THREADS_Y;  // 4

__global__ void __launch_bounds__(THREADS_X * THREADS_Y) transpose_wide(const float* input, float* output, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    unsigned column_tiles = (unsigned)(cols - 1) / TILE + 1;
    unsigned first_row = blockIdx.x / column_tiles * TILE;
    unsigned first_col = blockIdx.x % column_tiles * TILE;

    // All eight loads first (a missing element, past an edge, is never stored anywhere).
    float v[ROWS_PER_THREAD][COLS_PER_THREAD];
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r)
#pragma unroll
        for (int c = 0; c < COLS_PER_THREAD; ++c) {
            unsigned row = first_row + threadIdx.y + r * THREADS_Y, col = first_col + threadIdx.x + c * THREADS_X;
            v[r][c] = row < (unsigned)rows && col < (unsigned)cols ? input[(size_t)row * cols + col] : 0.0f;
        }
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r)
#pragma unroll
        for (int c = 0; c < COLS_PER_THREAD; ++c) tile[threadIdx.y + r * THREADS_Y][threadIdx.x + c * THREADS_X] = v[r][c];
    __syncthreads();  // outside every branch: all 512 threads reach it

    // The output tile is 64 rows (input columns) by 64 columns (input rows); a warp writes along a row.
#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r)
#pragma unroll
        for (int c = 0; c < COLS_PER_THREAD; ++c) {
            unsigned out_row = first_col + threadIdx.y + r * THREADS_Y;  // an input column
            unsigned out_col = first_row + threadIdx.x + c * THREADS_X;  // an input row
            if (out_row < (unsigned)cols && out_col < (unsigned)rows)
                output[(size_t)out_row * rows + out_col] = tile[threadIdx.x + c * THREADS_X][threadIdx.y + r * THREADS_Y];
        }
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    unsigned tiles = ((unsigned)(cols - 1) / TILE + 1) * ((unsigned)(rows - 1) / TILE + 1);
    transpose_wide<<<tiles, dim3(THREADS_X, THREADS_Y)>>>(input, output, rows, cols);
}
