// expect: OUT_OF_BOUNDS
// Correct naive kernel, except the thread that writes the last element C[M*K-1] also writes
// C[M*K], one float past the end of C. The grader's guard region must catch the stray write.
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
    size_t idx = (size_t)row * K + col;
    C[idx] = acc;
    if (idx == (size_t)M * K - 1) {
        C[idx + 1] = acc;  // BUG: one element past the end of C
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
