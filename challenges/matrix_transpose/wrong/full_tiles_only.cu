// expect: WRONG_ANSWER
// expect-message: never written
// The padded tile kernel with a shortcut: a block whose 32×32 tile is not entirely inside the matrix
// returns at once, so that the rest can drop their bounds checks. Every matrix whose sides are
// multiples of 32 is transposed right; any other leaves its last partial row and column of tiles as
// the NaN the output arrives filled with. The very first case, 1×1, has no full tile and writes
// nothing at all.
#include <cuda_runtime.h>

constexpr int TILE = 32;

__global__ void transpose_full_tiles(const float* input, float* output, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int first_row = blockIdx.y * TILE, first_col = blockIdx.x * TILE;
    if (first_row + TILE > rows || first_col + TILE > cols) return;  // BUG: the edge tiles are never done
    tile[threadIdx.y][threadIdx.x] = input[(first_row + threadIdx.y) * cols + first_col + threadIdx.x];
    __syncthreads();
    output[(first_col + threadIdx.y) * rows + first_row + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_full_tiles<<<grid, dim3(TILE, TILE)>>>(input, output, rows, cols);
}
