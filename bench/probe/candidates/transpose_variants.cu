// Transpose candidates for the top level, one file built with different macros:
//   TILE_R × TILE_C  the input tile a block moves (rows × columns), through shared memory padded by one
//   BY               thread rows: a block is 32 × BY threads; each thread moves (TILE_R/BY)·(TILE_C/32)
//   STREAM           1: loads and stores with the streaming hints (__ldcs / __stcs)
#include <cuda_runtime.h>

#ifndef TILE_R
#define TILE_R 32
#endif
#ifndef TILE_C
#define TILE_C 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef STREAM
#define STREAM 0
#endif

__device__ __forceinline__ float load(const float* p) {
#if STREAM
    return __ldcs(p);
#else
    return *p;
#endif
}
__device__ __forceinline__ void store(float* p, float v) {
#if STREAM
    __stcs(p, v);
#else
    *p = v;
#endif
}

__global__ void __launch_bounds__(32 * BY) transpose(const float* input, float* output, int rows, int cols) {
    __shared__ float tile[TILE_R][TILE_C + 1];
    unsigned column_tiles = (unsigned)(cols - 1) / TILE_C + 1;
    unsigned first_row = blockIdx.x / column_tiles * TILE_R;
    unsigned first_col = blockIdx.x % column_tiles * TILE_C;
    float v[TILE_R / BY][TILE_C / 32];
#pragma unroll
    for (int r = 0; r < TILE_R / BY; ++r)
#pragma unroll
        for (int c = 0; c < TILE_C / 32; ++c) {
            unsigned row = first_row + threadIdx.y + r * BY, col = first_col + threadIdx.x + c * 32;
            v[r][c] = row < (unsigned)rows && col < (unsigned)cols ? load(input + (size_t)row * cols + col) : 0.0f;
        }
#pragma unroll
    for (int r = 0; r < TILE_R / BY; ++r)
#pragma unroll
        for (int c = 0; c < TILE_C / 32; ++c) tile[threadIdx.y + r * BY][threadIdx.x + c * 32] = v[r][c];
    __syncthreads();
    // output tile: TILE_C rows (input columns) × TILE_R columns (input rows)
#pragma unroll
    for (int r = 0; r < TILE_C / BY; ++r)
#pragma unroll
        for (int c = 0; c < TILE_R / 32; ++c) {
            unsigned out_row = first_col + threadIdx.y + r * BY, out_col = first_row + threadIdx.x + c * 32;
            if (out_row < (unsigned)cols && out_col < (unsigned)rows)
                store(output + (size_t)out_row * rows + out_col, tile[threadIdx.x + c * 32][threadIdx.y + r * BY]);
        }
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    unsigned tiles = ((unsigned)(cols - 1) / TILE_C + 1) * ((unsigned)(rows - 1) / TILE_R + 1);
    transpose<<<tiles, dim3(32, BY)>>>(input, output, rows, cols);
}
