// expect: RUNTIME_ERROR
// expect-message: SIGABRT
// requires: sandbox
// malloc(100 GiB) and abort() when it fails, as a program that crashes on out-of-memory would. The
// worker's data-size limit makes it fail; without limits, if it succeeds it is freed untouched.
#include <cstdlib>
#include <cuda_runtime.h>

constexpr int BLOCK = 16;
constexpr size_t HUGE_BYTES = (size_t)100 << 30;  // 100 GiB

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

static void* volatile g_last;  // the pointer escapes here, so no compiler may elide the malloc

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    void* scratch = std::malloc(HUGE_BYTES);
    if (!scratch) std::abort();  // BUG: dies on out-of-memory instead of coping
    g_last = scratch;
    std::free(scratch);          // never touched: an overcommitted 100 GiB costs nothing

    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
