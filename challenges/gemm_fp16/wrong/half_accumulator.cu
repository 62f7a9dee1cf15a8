// expect: WRONG_ANSWER
// Level 1 with the sum kept in half: acc = __hfma(a, b, acc), the GPU's half fused multiply-add, no
// conversions. Each step rounds the running sum to 11 significant bits, so the sum drifts by about
// 2^-12 of its size per step, and the errors add up along k: already at K = 16 (LeetGPU's tests) the
// worst element is about 6 times the limit, and at K = 1000 about 13 times (statement.md, "Accuracy":
// the answer must be the exact result rounded to half once, give or take FP32 noise). LeetGPU asks for
// FP32 accumulation for this reason, though its tolerance of 0.05 lets this kernel through.
// The fix: an FP32 accumulator (acc += __half2float(a) * __half2float(b)); the products of halves
// are exact in FP32, so only the additions round, 8192 times more finely.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void gemm_half_sum(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    int col = blockIdx.x * BLOCK + threadIdx.x;
    int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    half acc = __float2half(0.0f);
    for (int k = 0; k < K; ++k) {
        acc = __hfma(A[(size_t)row * K + k], B[(size_t)k * N + col], acc);  // BUG: rounded to half every step
    }
    size_t at = (size_t)row * N + col;
    C[at] = __float2half_rn(alpha * __half2float(acc) + beta * __half2float(C[at]));
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    gemm_half_sum<<<grid, block>>>(A, B, C, M, N, K, alpha, beta);
}
