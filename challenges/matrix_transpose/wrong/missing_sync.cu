// expect: RACE
// expect-message: __syncthreads
// backends: emulator
// The shared-memory tile without the __syncthreads() between loading the tile and reading it. A
// thread reads tile[x][y], which thread (y, x) loads, often in another warp: nothing makes that warp
// go first, so some threads store whatever the tile held before. On a GPU the outcome depends on
// how the warps happen to be scheduled (often wrong, sometimes right by luck), so only the emulator,
// which runs every case with the threads in two orders, promises a verdict: the orders disagree.
// The 1×1 case passes (its one thread reads its own element); the 1×1000 row vector does not.
#include <cuda_runtime.h>

constexpr int TILE = 32;

__global__ void transpose_no_barrier(const float* input, float* output, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int first_row = blockIdx.y * TILE, first_col = blockIdx.x * TILE;
    int row = first_row + threadIdx.y, col = first_col + threadIdx.x;
    if (row < rows && col < cols) tile[threadIdx.y][threadIdx.x] = input[row * cols + col];
    // BUG: __syncthreads() belongs here
    int out_row = first_col + threadIdx.y, out_col = first_row + threadIdx.x;
    if (out_row < cols && out_col < rows) output[out_row * rows + out_col] = tile[threadIdx.x][threadIdx.y];
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_no_barrier<<<grid, dim3(TILE, TILE)>>>(input, output, rows, cols);
}
