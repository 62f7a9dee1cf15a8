// expect: ACCEPTED
// Level 1 — naive: one thread per element of C, the sum over k in FP32.
//
// Thread (row, col) walks k from 0 to K - 1, converts A[row][k] and B[k][col] from half to float and
// adds their product to an FP32 accumulator. The product of two halves has at most 22 significant
// bits, so it is exact in FP32; only the additions round, by 2^-24 each. The epilogue computes
// alpha·acc + beta·C[row][col] in FP32 and rounds once, to half, as it stores: the only half rounding
// of the whole computation (statement.md, "Accuracy").
//
// Threads next to each other in x take neighbouring columns, so a warp (two rows of 16 threads)
// reads two runs of 16 consecutive halves of B, coalesced, and one element of A per row, a broadcast.
// Every multiply-add still loads its two operands from global memory (or L1): the kernel is bound by
// memory traffic, at a small fraction of what the GPU's FP32 units, let alone its tensor cores, can do.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int BLOCK = 16;  // 16×16 threads, one element of C each

__global__ void gemm_naive(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    int col = blockIdx.x * BLOCK + threadIdx.x;
    int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;

    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)k * N + col]);
    }
    size_t at = (size_t)row * N + col;
    // beta = 0 leaves C unread, as BLAS does: whatever C held does not matter then.
    float result = beta == 0.0f ? alpha * acc : alpha * acc + beta * __half2float(C[at]);
    C[at] = __float2half_rn(result);
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    gemm_naive<<<grid, block>>>(A, B, C, M, N, K, alpha, beta);
}
