// expect: WRONG_ANSWER
// 16x16 shared-memory tiling that loads the A and B tiles without bounds checks (only the final
// store is checked). It passes on tile multiples (indeed whenever N % 16 == 0); for any other N the
// junk read past A and B (guard NaN, or the next row) enters the sums and the odd shapes must fail.
#include <cuda_runtime.h>

constexpr int TILE = 16;

__global__ void matmul_tiled_unchecked(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        // BUG: no zero-padding. When row >= M, col >= K or t + tx / t + ty >= N these loads read
        // outside the matrices (or wrap into the next row) and the junk enters the dot products.
        As[ty][tx] = A[(size_t)row * N + t + tx];
        Bs[ty][tx] = B[(size_t)(t + ty) * K + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < K) C[(size_t)row * K + col] = acc;  // only the store is bounds-checked
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((K + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled_unchecked<<<grid, block>>>(A, B, C, M, N, K);
}
