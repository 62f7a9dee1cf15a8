// expect: ACCEPTED
// Computes C correctly, but first leaves a daemon behind: a double fork and setsid, a grandchild
// that sleeps and then writes into the output buffer and prints. Nothing a submission starts may
// outlive its verdict: the harness checks that no process of it is left.
#include <cuda_runtime.h>
#include <cstdio>
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

static void daemonize() {
    if (fork() != 0) return;
    setsid();
    if (fork() != 0) _exit(0);
    for (int i = 0; i < 600; ++i) sleep(1);
    std::printf("the daemon is still alive\n");
    _exit(0);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (daemonize(), true);
    (void)once;
    launch(A, B, C, M, N, K);
}
