// expect: WRONG_ANSWER
// The epilogue writes alpha·(A·B) and never reads C: the kernel of a plain matrix product with a
// scale, not a GEMM. C is `inout`: it arrives holding values that the answer must include as
// beta·C. Right only when beta is 0 (LeetGPU's first test); every case with beta ≠ 0 fails, the
// first of them being functional case 1 (1×1×1 with beta drawn from [-1, 1]).
// The fix: read C[row][col] before overwriting it, C = alpha·acc + beta·C, in FP32, rounded once.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void gemm_no_beta(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    int col = blockIdx.x * BLOCK + threadIdx.x;
    int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)k * N + col]);
    C[(size_t)row * N + col] = __float2half_rn(alpha * acc);  // BUG: + beta · C[row][col] is missing
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    gemm_no_beta<<<grid, block>>>(A, B, C, M, N, K, alpha, beta);
}
