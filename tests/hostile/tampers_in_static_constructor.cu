// expect: RUNTIME_ERROR
// expect-message: static constructor
// backends: emulator
// Ignores SIGXCPU and raises its soft CPU-time limit to the hard limit from a static constructor,
// which runs before main() and before solve is ever called; solve itself is correct. The runtime
// confined the process before any constructor (its seccomp filter traps the new handler) and refuses
// to run the submission.
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/resource.h>

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

static int tamper() {
    signal(SIGXCPU, SIG_IGN);
    rlimit limit{};
    getrlimit(RLIMIT_CPU, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_CPU, &limit);
    return 1;
}

static int g_tampered = tamper();

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    launch(A, B, C, M, N, K);
}
