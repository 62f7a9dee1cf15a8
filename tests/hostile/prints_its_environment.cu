// expect: ACCEPTED
// Prints every environment variable it was given and /proc/self/environ: the worker's environment
// is an allow-list (PATH, locale, the CUDA variables), never the grader's whole shell, so none of the
// teacher's variables (the harness plants one) reaches a submission. It computes C correctly.
#include <cuda_runtime.h>
#include <cstdio>
extern char** environ;

static void print_environment() {
    for (char** e = environ; *e; ++e) std::printf("env: %s\n", *e);
    if (FILE* f = std::fopen("/proc/self/environ", "rb")) {
        int c;
        while ((c = std::fgetc(f)) != EOF) std::putchar(c ? c : '\n');
        std::fclose(f);
    }
    std::fflush(stdout);
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
    static bool once = (print_environment(), true);
    (void)once;
    launch(A, B, C, M, N, K);
}
