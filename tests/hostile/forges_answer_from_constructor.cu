// expect: RUNTIME_ERROR
// expect-message: results pipe
// Forges from a static constructor, before solve is ever called: when the library is loaded, it
// finds the worker's results pipe on its command line (--results-fd N) and writes a line that is not
// an answer at all. The grader must not take it for the worker's "ready" (nor crash on it): the
// submission's RUNTIME_ERROR, and a batch goes on with the next student.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

static int results_fd() {
    FILE* f = std::fopen("/proc/self/cmdline", "rb");
    if (!f) return -1;
    static char args[1 << 16];
    size_t n = std::fread(args, 1, sizeof args - 1, f);
    std::fclose(f);
    args[n] = 0;
    for (size_t i = 0; i < n; i += std::strlen(args + i) + 1)
        if (std::strcmp(args + i, "--results-fd") == 0) return std::atoi(args + i + std::strlen(args + i) + 1);
    return -1;
}

static int forge_before_start = [] {
    int fd = results_fd();
    const char forged[] = "garbage {\"ok\": tru\n";
    if (fd >= 0 && write(fd, forged, sizeof forged - 1) < 0) std::perror("write");
    return 0;
}();

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16), grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
