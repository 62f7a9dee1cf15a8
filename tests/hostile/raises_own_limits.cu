// expect: RUNTIME_ERROR
// expect-message: RLIMIT_FSIZE
// backends: emulator
// Raises its soft file-size and CPU-time limits up to the hard limits, which any process may do, then
// prints 65 MiB (once per worker), past the 64 MiB the grader allows its output, and computes C
// correctly. The runtime refuses the new limits, or finds them changed after the call; were the
// limits left raised, the flood would pass (ACCEPTED).
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>

constexpr size_t CHUNK = 1 << 20;
constexpr int CHUNKS = 65;

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

static bool raise_to_hard(int resource) {
    rlimit limit{};
    getrlimit(static_cast<__rlimit_resource_t>(resource), &limit);
    limit.rlim_cur = limit.rlim_max;
    return setrlimit(static_cast<__rlimit_resource_t>(resource), &limit) == 0;
}

static bool g_flooded = false;

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    bool raised = raise_to_hard(RLIMIT_FSIZE) && raise_to_hard(RLIMIT_CPU);
    if (raised && !g_flooded) {
        g_flooded = true;
        static char line[CHUNK];
        std::memset(line, 'x', sizeof line);
        for (int i = 0; i < CHUNKS; ++i) std::fwrite(line, 1, sizeof line, stdout);
        std::fflush(stdout);
    }
    launch(A, B, C, M, N, K);
}
