// expect: RUNTIME_ERROR
// expect-message: divergent __syncthreads
// backends: emulator
// A __syncthreads() inside a branch that only half of the block takes: undefined behaviour that
// hangs or corrupts results on a GPU. The emulator must report it, naming block and threads.
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
        if (tx < TILE / 2) __syncthreads();  // only half of the block reaches this barrier

        for (int i = 0; i < TILE; ++i) {
            acc += As[ty][i] * Bs[i][tx];
        }
        __syncthreads();
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
