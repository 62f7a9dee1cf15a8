// expect: OUT_OF_BOUNDS
// expect-message: wrote outside A
// Computes C correctly, then writes a word just past the end of A, an input: guards around inputs
// are checked as well as those around outputs.
#include <cuda_runtime.h>

__global__ void poke(float* A, size_t end) { A[end] = 1.0f; }

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = 0.0f;
        for (int i = 0; i < N; ++i) sum += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

static void launch(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    launch(A, B, C, M, N, K);
    poke<<<1, 1>>>(const_cast<float*>(A), (size_t)M * N);
}
