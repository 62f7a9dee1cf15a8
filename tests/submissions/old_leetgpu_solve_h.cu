// expect: ACCEPTED
// LeetGPU's older starter format: `#include "solve.h"` and a `solve` defined without `extern "C"`.
// The grader puts a solve.h declaring the challenge's entry point (with C linkage) beside every
// compile, so files written that way build unchanged and export `solve` under its C name.
#include "solve.h"
#include <cuda_runtime.h>

__global__ void product(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = 0.0f;
        for (int n = 0; n < N; ++n) sum += A[(size_t)row * N + n] * B[(size_t)n * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    product<<<grid, block>>>(A, B, C, M, N, K);
}
