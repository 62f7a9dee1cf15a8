// expect: INTERFACE_ERROR
// expect-message: signature
// solve is missing the K parameter (the kernel assumes a fixed K of 64), so its signature does
// not match the contract; calling it with six arguments would be undefined, so the grader must refuse.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;
constexpr int FIXED_K = 64;

__global__ void matmul_fixed_k(const float* A, const float* B, float* C, int M, int N) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= FIXED_K) return;

    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        acc += A[(size_t)row * N + n] * B[(size_t)n * FIXED_K + col];
    }
    C[(size_t)row * FIXED_K + col] = acc;
}

// BUG: the contract is solve(A, B, C, M, N, K).
extern "C" void solve(const float* A, const float* B, float* C, int M, int N) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((FIXED_K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_fixed_k<<<grid, block>>>(A, B, C, M, N);
}
