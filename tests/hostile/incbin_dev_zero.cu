// expect: COMPILE_ERROR
// Embeds /dev/zero with .incbin: the assembler writes zeros until something stops it. The compile's
// file-size limit (256 MiB, hard) ends it in well under a second; nothing is left behind.
#include <cuda_runtime.h>
#define GLUE(a, b) a##b
#define TEXT(x) #x
#define SPELL(x) TEXT(x)
asm(".section .rodata\nendless:\n" SPELL(GLUE(.inc, bin)) " \"/dev/zero\"\n.text\n");

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
    launch(A, B, C, M, N, K);
}
