// Approach: 64×64 tiles through shared memory (padded to 65 columns so that reading a tile column hits 32
// banks), 32×16 threads per tile, each loading eight elements before storing any; reads and writes are
// both along rows, so both are coalesced. From this project's challenges/matrix_transpose/levels/5_wide_tile.cu.
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
