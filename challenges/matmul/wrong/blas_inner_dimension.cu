// expect: WRONG_ANSWER
// The naive kernel written with BLAS's names: K taken as the inner dimension (A as M×K, B as K×N).
// In this challenge N is the inner one (A is M×N, B is N×K, C is M×K), so the kernel sums over the
// wrong extent and steps through A and B with the wrong strides. Square shapes hide it (N = K); every
// case where N ≠ K shows it: the sums are wrong, and where K > N it reads past A's and B's ends,
// whose guards are NaN.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void matmul_blas_names(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;

    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {  // BUG: the inner dimension is N
        acc += A[(size_t)row * K + k] * B[(size_t)k * K + col];
    }
    C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_blas_names<<<grid, block>>>(A, B, C, M, N, K);
}
