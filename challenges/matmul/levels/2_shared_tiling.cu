// expect: ACCEPTED
// Level 2 — shared-memory tiling.
//
// Over level 1: a 32×32 block first copies a 32×32 tile of A and of B into shared memory, then
// every thread reads its 32 multiply-add operands from there. Each value fetched from global
// memory is now used 32 times instead of once, so global traffic falls 32-fold and the limit
// moves to shared-memory bandwidth: still two shared loads per multiply-add.
#include <cuda_runtime.h>

constexpr int TILE = 32;

__global__ void matmul_shared(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        // Zero-padding past the edges keeps the inner loop free of bounds checks.
        As[ty][tx] = (row < M && t + tx < N) ? A[(size_t)row * N + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < N && col < K) ? B[(size_t)(t + ty) * K + col] : 0.0f;
        __syncthreads();  // the tile is complete before anyone reads it
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();  // everyone is done with it before it is overwritten
    }
    if (row < M && col < K) C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((K + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_shared<<<grid, block>>>(A, B, C, M, N, K);
}
