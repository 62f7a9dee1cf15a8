// expect: OUT_OF_BOUNDS
// expect-message: past its end
// The padded shared-memory tile with its load checked and its store not. The load's check keeps the
// reads inside the input, which can look like enough, but the blocks of the last tile row and column
// overhang the matrix on the output side too: a thread past the edge writes its (unloaded) tile
// element to output[out_row * rows + out_col], beyond the last row of the output or into the next
// one. At 1×1 the single block's 1,024 threads write 63 elements where the output has one.
#include <cuda_runtime.h>

constexpr int TILE = 32;

__global__ void transpose_unchecked_store(const float* input, float* output, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int first_row = blockIdx.y * TILE, first_col = blockIdx.x * TILE;
    int row = first_row + threadIdx.y, col = first_col + threadIdx.x;
    if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = input[row * cols + col];
    __syncthreads();
    int out_row = first_col + threadIdx.y, out_col = first_row + threadIdx.x;
    // BUG: no `if (out_row < cols && out_col < rows)` before the store
    output[out_row * rows + out_col] = tile[threadIdx.x][threadIdx.y];
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_unchecked_store<<<grid, dim3(TILE, TILE)>>>(input, output, rows, cols);
}
