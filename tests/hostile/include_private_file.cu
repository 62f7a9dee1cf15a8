// expect: COMPILE_ERROR
// expect-message: no such file
// requires: sandbox
// Includes a file from a private folder by its absolute path (the harness puts a C string literal
// there and names the folder in place of @PLANTED@): the preprocessor runs boxed, so the private
// folder does not exist for it. Unboxed, this compiles and the string is printed on every call.
#include <cuda_runtime.h>
#include <cstdio>
static const char* stolen =
#include "@PLANTED@/secret.h"
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
    std::printf("stolen at compile time: %s\n", stolen);
    launch(A, B, C, M, N, K);
}
