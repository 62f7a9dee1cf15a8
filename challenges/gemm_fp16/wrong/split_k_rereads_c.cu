// expect: WRONG_ANSWER
// Split-K done as two launches over the two halves of k, each finishing with the full epilogue
// C = alpha·partial + beta·C. The second launch reads C after the first has overwritten it, so the
// answer comes out as alpha·P2 + beta·(alpha·P1 + beta·C): the first half is scaled by beta and C by
// beta². Right only when beta is exactly 1 (then it is the answer with one extra rounding to half);
// with beta = 0 it keeps only the second half of the sum.
// The fix: the beta·C term belongs to exactly one pass. Either the first pass computes
// alpha·P1 + beta·C and the second adds alpha·P2 alone, or both partial sums go to FP32 scratch
// memory and one final pass reads C once (which also avoids rounding the partial result to half).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void gemm_k_range(const half* A, const half* B, half* C, int M, int N, int K, int k_begin, int k_end,
                             float alpha, float beta) {
    int col = blockIdx.x * BLOCK + threadIdx.x;
    int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = k_begin; k < k_end; ++k) {
        acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)k * N + col]);
    }
    size_t at = (size_t)row * N + col;
    C[at] = __float2half_rn(alpha * acc + beta * __half2float(C[at]));  // BUG in the second pass: C is no longer C
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    int middle = K / 2;
    gemm_k_range<<<grid, block>>>(A, B, C, M, N, K, 0, middle, alpha, beta);
    gemm_k_range<<<grid, block>>>(A, B, C, M, N, K, middle, K, alpha, beta);
}
