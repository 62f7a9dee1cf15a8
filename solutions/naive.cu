// expect: ACCEPTED
// The seed ladder's naive kernel: one thread per C element, x -> column (coalesced B reads),
// y -> row, 16x16 blocks, bounds-checked. Correct for every shape; the grader must accept it.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;

    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        acc += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    }
    C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
