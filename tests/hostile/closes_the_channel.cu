// expect: RUNTIME_ERROR
// Computes C, then closes every file descriptor above stderr, the worker's command and result pipes
// among them. The grader sees the channel end: the submission's RUNTIME_ERROR, never a grader error,
// and the next submission is graded normally.
#include <cuda_runtime.h>
#include <unistd.h>

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
    cudaDeviceSynchronize();
    for (int fd = 3; fd < 1024; ++fd) close(fd);
}
