// expect: INTERFACE_ERROR
// expect-message: cublas
// Declares and calls cublasCreate_v2 itself (no header), then runs a naive kernel. The library
// is not linked, so linking with -z,defs fails on cublasCreate_v2; the grader must forbid library calls.
#include <cuda_runtime.h>

extern "C" int cublasCreate_v2(void** handle);

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
    void* handle = nullptr;
    cublasCreate_v2(&handle);  // BUG: library calls are not allowed

    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
