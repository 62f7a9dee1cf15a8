// expect: WRONG_ANSWER
// The kernel computes each dot product into a register but never stores it, so C keeps the
// grader's NaN fill. The grader must notice that the output was never written.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void matmul_no_store(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;

    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        acc += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    }
    (void)acc;  // BUG: the result is never stored to C
    (void)C;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_no_store<<<grid, block>>>(A, B, C, M, N, K);
}
