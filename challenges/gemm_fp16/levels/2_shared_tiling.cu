// expect: ACCEPTED
// Level 2 — shared-memory tiling, two halves per load.
//
// Over level 1: a block computes a 32×32 tile of C. For each 32-wide step along k it first copies
// a 32×32 tile of A and one of B into shared memory, synchronizes, and multiplies from there, so
// each value fetched from global memory is used 32 times instead of once: global traffic falls
// 32-fold. Halves are moved in pairs (__half2, 4 bytes): each of the 16×32 threads loads one pair of
// A and one of B per step and computes two neighbouring outputs of its row of C, which halves the
// load instructions and reads each pair of B from shared memory once for two outputs.
//
// A pair can be read as one __half2 only where it is 4-byte aligned: always when K (for A) or N (for
// B) is even, every other row when it is odd. `load_pair` checks the address and falls back to two
// separate halves; past the matrix's edges it loads zeros, which add nothing to the sums, so the
// inner loop needs no bounds checks. The sum is FP32, k ascending, as in level 1.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

constexpr int TILE = 32;          // C tile and k step
constexpr int PAIRS = TILE / 2;   // __half2 pairs per tile row; also the block's x extent

// Elements (row, col) and (row, col + 1) of a rows × cols row-major matrix; zero past its edges.
__device__ __half2 load_pair(const half* m, int row, int col, int rows, int cols) {
    __half2 v;
    v.x = v.y = __float2half(0.0f);
    if (row >= rows || col >= cols) return v;
    const half* p = m + (size_t)row * cols + col;
    if (col + 1 < cols && (reinterpret_cast<uintptr_t>(p) & 3) == 0) return *reinterpret_cast<const __half2*>(p);
    v.x = p[0];
    if (col + 1 < cols) v.y = p[1];
    return v;
}

__global__ void gemm_shared(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    __shared__ __half2 As[TILE][PAIRS];  // As[r][p]: A[row0 + r][k0 + 2p .. 2p + 1]
    __shared__ __half2 Bs[TILE][PAIRS];  // Bs[r][p]: B[k0 + r][col0 + 2p .. 2p + 1]
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + 2 * tx;  // this thread's two outputs: col and col + 1

    float acc0 = 0.0f, acc1 = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = load_pair(A, row, k0 + 2 * tx, M, K);
        Bs[ty][tx] = load_pair(B, k0 + ty, col, K, N);
        __syncthreads();  // both tiles are complete before anyone reads them
#pragma unroll
        for (int p = 0; p < PAIRS; ++p) {
            __half2 a = As[ty][p];  // A[row][k], A[row][k + 1], k = k0 + 2p
            __half2 b0 = Bs[2 * p][tx], b1 = Bs[2 * p + 1][tx];
            float a0 = __low2float(a), a1 = __high2float(a);
            acc0 += a0 * __low2float(b0);
            acc1 += a0 * __high2float(b0);
            acc0 += a1 * __low2float(b1);
            acc1 += a1 * __high2float(b1);
        }
        __syncthreads();  // everyone is done with the tiles before the next step overwrites them
    }
    if (row >= M) return;
    float acc[2] = {acc0, acc1};
    for (int j = 0; j < 2 && col + j < N; ++j) {
        size_t at = (size_t)row * N + col + j;
        float result = beta == 0.0f ? alpha * acc[j] : alpha * acc[j] + beta * __half2float(C[at]);
        C[at] = __float2half_rn(result);
    }
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 block(PAIRS, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    gemm_shared<<<grid, block>>>(A, B, C, M, N, K, alpha, beta);
}
