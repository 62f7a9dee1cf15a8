// expect: RUNTIME_ERROR
// expect-message: output
// requires: sandbox
// Prints 100 MB to stdout (100 chunks of 1 MB, once per worker), then computes C correctly. The
// worker's output cap (64 MiB) must stop it; the grader must report the flood, not store it all.
#include <cuda_runtime.h>
#include <errno.h>
#include <signal.h>
#include <cstdio>
#include <vector>

constexpr int BLOCK = 16;
constexpr size_t CHUNK = 1 << 20;  // 1 MB
constexpr int CHUNKS = 100;        // 100 MB at most, ever

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

static void flood() {
    std::vector<char> line(CHUNK, 'x');
    for (size_t i = 63; i < CHUNK; i += 64) line[i] = '\n';
    for (int i = 0; i < CHUNKS; ++i) {
        if (std::fwrite(line.data(), 1, CHUNK, stdout) != CHUNK || std::fflush(stdout) != 0) {
            if (errno == EFBIG) {
                // Past the file-size cap. A C program dies of SIGXFSZ here, but a process that ignores
                // the signal (the CUDA backend's Python worker does) only sees EFBIG: die the same way.
                signal(SIGXFSZ, SIG_DFL);
                raise(SIGXFSZ);
            }
            return;  // any other failure: stop writing
        }
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool flooded = false;  // once per worker: 100 MB in all, never more
    if (!flooded) {
        flooded = true;
        flood();  // BUG: floods the grader with output
    }
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
