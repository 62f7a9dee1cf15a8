// expect: WRONG_ANSWER
// B indexed as if it were stored N × K (each output column's k values consecutive, as a column-major
// or pre-transposed B would be): B[col * K + k] instead of B[k * N + col]. The kernel then multiplies
// A by a reshuffled B. It is right only where the two layouts coincide (N = 1 or K = 1) and reads
// the wrong elements everywhere else, starting with LeetGPU's 2×2×3 example shape.
// The fix: B is K × N, row-major, like every matrix here: element (k, col) is B[k * N + col].
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void gemm_b_swapped(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    int col = blockIdx.x * BLOCK + threadIdx.x;
    int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc += __half2float(A[(size_t)row * K + k]) * __half2float(B[(size_t)col * K + k]);  // BUG: B is K × N
    }
    size_t at = (size_t)row * N + col;
    C[at] = __float2half_rn(alpha * acc + beta * __half2float(C[at]));
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((N + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    gemm_b_swapped<<<grid, block>>>(A, B, C, M, N, K, alpha, beta);
}
