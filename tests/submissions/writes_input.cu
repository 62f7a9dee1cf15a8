// expect: INPUT_MODIFIED
// expect-message: A is an input
// Computes C correctly, then zeroes A's first element: inputs are read-only, and a grader that
// did not check could be fooled by a kernel that rewrites its inputs to make the answer easy.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;
    float acc = 0.0f;
    for (int n = 0; n < N; ++n) acc += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
    cudaMemset(const_cast<float*>(A), 0, sizeof(float));  // after the kernel, in stream order
}
