// expect: RUNTIME_ERROR
// expect-message: alternate signal stack
// backends: emulator
// Moves the alternate signal stack, which the runtime's crash handlers run on, into a buffer of its
// own (a crash could then overwrite memory it chose), then computes C correctly. The runtime refuses
// it, or finds it after the call.
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

static char g_stack[1 << 16];

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    stack_t mine{};
    mine.ss_sp = g_stack;
    mine.ss_size = sizeof g_stack;
    sigaltstack(&mine, nullptr);
    launch(A, B, C, M, N, K);
}
