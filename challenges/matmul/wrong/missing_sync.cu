// expect: RACE
// expect-message: __syncthreads
// expect-cuda: WRONG_ANSWER
// The shared-memory tiled kernel with its second __syncthreads() removed: a fast thread starts
// loading the next tile while slower threads still read the current one. A GPU hides this on
// small shapes; the functional case many_blocks (over a thousand blocks at once) exposes it.
#include <cuda_runtime.h>

constexpr int TILE = 16;

__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        int a_col = t + tx;  // column of A this thread loads
        int b_row = t + ty;  // row of B this thread loads
        As[ty][tx] = (row < M && a_col < N) ? A[(size_t)row * N + a_col] : 0.0f;
        Bs[ty][tx] = (b_row < N && col < K) ? B[(size_t)b_row * K + col] : 0.0f;
        __syncthreads();

        for (int i = 0; i < TILE; ++i) {
            acc += As[ty][i] * Bs[i][tx];
        }
        // (the __syncthreads() that belongs here is missing)
    }

    if (row < M && col < K) {
        C[(size_t)row * K + col] = acc;
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((K + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(A, B, C, M, N, K);
}
