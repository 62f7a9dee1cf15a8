// expect: ACCEPTED
// Shared-memory tiling with the tiles in dynamic shared memory (extern __shared__), sized at
// launch time from the tile width.
#include <cuda_runtime.h>

__global__ void matmul_dynamic_tiles(const float* A, const float* B, float* C, int M, int N, int K) {
    extern __shared__ float tiles[];
    const int tile = blockDim.x;
    float* As = tiles;                // tile x tile slice of A
    float* Bs = tiles + tile * tile;  // tile x tile slice of B

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * tile + ty, col = blockIdx.x * tile + tx;
    float acc = 0.0f;
    for (int t = 0; t < N; t += tile) {
        As[ty * tile + tx] = (row < M && t + tx < N) ? A[(size_t)row * N + t + tx] : 0.0f;
        Bs[ty * tile + tx] = (t + ty < N && col < K) ? B[(size_t)(t + ty) * K + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < tile; ++k) acc += As[ty * tile + k] * Bs[k * tile + tx];
        __syncthreads();
    }
    if (row < M && col < K) C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    const int tile = 16;
    dim3 block(tile, tile), grid((K + tile - 1) / tile, (M + tile - 1) / tile);
    size_t smem = 2 * tile * tile * sizeof(float);
    matmul_dynamic_tiles<<<grid, block, smem>>>(A, B, C, M, N, K);
}
