// expect: RUNTIME_ERROR
// expect-message: memory
// Asks cudaMalloc for 1 TiB (more than any GPU has), ignores the failure and computes C correctly.
// The failed allocation stays pending as cudaGetLastError(); the grader must report it.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;
constexpr size_t HUGE_BYTES = (size_t)1 << 40;  // 1 TiB

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
    float* scratch = nullptr;
    cudaMalloc(&scratch, HUGE_BYTES);  // BUG: the error is neither checked nor cleared
    if (scratch) cudaFree(scratch);    // fail-safe: should it ever succeed, give it straight back

    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
