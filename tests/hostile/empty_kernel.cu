// expect: WRONG_ANSWER
// solve launches a kernel whose body is empty: the launch succeeds and no CUDA error is raised,
// but C keeps the grader's NaN fill. A clean launch is not a result; the grader must check C.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void matmul_empty(const float* A, const float* B, float* C, int M, int N, int K) {
    // BUG: nothing here
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_empty<<<grid, block>>>(A, B, C, M, N, K);
}
