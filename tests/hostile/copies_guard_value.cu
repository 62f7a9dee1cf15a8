// expect: OUT_OF_BOUNDS
// expect-message: wrote outside C
// Computes C correctly, then copies the word just past B's end into the word just past C's end.
// Were every guard region filled with one pattern, the copy would leave C's guard unchanged and
// pass unseen; guard words are drawn per buffer and per run, so it is a stray write.
#include <cuda_runtime.h>

__global__ void copy_past_the_end(const float* B, float* C, size_t b_end, size_t c_end) {
    C[c_end] = B[b_end];
}

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
    copy_past_the_end<<<1, 1>>>(B, C, (size_t)N * K, (size_t)M * K);
}
