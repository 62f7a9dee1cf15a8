// expect: RUNTIME_ERROR
// expect-message: blocked SIGXCPU
// backends: emulator
// Blocks SIGXCPU, by which the CPU time limit stops the worker (a seccomp filter cannot refuse that:
// it cannot see which signals a mask names, they are in memory), then computes C correctly. The
// runtime's check after the call finds the signal blocked.
#include <cuda_runtime.h>
#include <signal.h>

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

static void launch(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    sigset_t limit;
    sigemptyset(&limit);
    sigaddset(&limit, SIGXCPU);
    sigprocmask(SIG_BLOCK, &limit, nullptr);
    launch(A, B, C, M, N, K);
}
