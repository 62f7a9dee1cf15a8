// expect: COMPILE_ERROR
// expect-message: no such file
// requires: sandbox
// Reads the class's secret seed (kept beside the results database) at compile time, to know the
// hidden shapes and values in advance. The database's folder is hidden from the compiler.
#include <cuda_runtime.h>
#include <cstdio>
static const unsigned long long class_seed =
#include "@PLANTED@/class/results.sqlite3.secret-seed"
    ;

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
    std::printf("class seed: %llu\n", class_seed);
    launch(A, B, C, M, N, K);
}
