// expect: WRONG_ANSWER
// Level 3 with half accumulator fragments: wmma::fragment<accumulator, 16, 16, 16, half> instead of
// float. It compiles, runs on the same tensor cores (faster on some GPUs), and matches FP32 on
// LeetGPU's 16×16×16 tests closely enough for their tolerance of 0.05. But every mma_sync rounds the
// running sum to half: over K = 1000 the roundings add up to many times what one rounding of the
// result allows, and even at K = 1 the product is rounded to half before beta·C is added, a second
// rounding that is far larger than the result wherever alpha·A·B and beta·C cancel (statement.md,
// "Accuracy"). LeetGPU asks for FP32 accumulation in so many words.
// The fix: fragment<accumulator, 16, 16, 16, float>, stored to a float scratch tile (levels/3_wmma.cu).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int WMMA = 16;
constexpr int BM = 64, BN = 64, BK = 32;
constexpr int WARPS_M = 2, WARPS_N = 2;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;
constexpr int FRAGS_M = WM / WMMA, FRAGS_N = WN / WMMA;
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int A_LD = BK + 8, B_LD = BN + 8;

__global__ void gemm_wmma_half_acc(const half* A, const half* B, half* C, int M, int N, int K, float alpha,
                                   float beta) {
    __shared__ __align__(32) half As[BM][A_LD];
    __shared__ __align__(32) half Bs[BK][B_LD];
    __shared__ __align__(32) half scratch[WARPS_M * WARPS_N][WMMA * WMMA];

    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, WMMA, WMMA, WMMA, half> acc[FRAGS_M][FRAGS_N];  // BUG: half sums
    for (int i = 0; i < FRAGS_M; ++i)
        for (int j = 0; j < FRAGS_N; ++j) wmma::fill_fragment(acc[i][j], __float2half(0.0f));

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += THREADS) {
            int r = i / BK, c = i % BK, row = row0 + r, k = k0 + c;
            As[r][c] = row < M && k < K ? A[(size_t)row * K + k] : __float2half(0.0f);
        }
        for (int i = tid; i < BK * BN; i += THREADS) {
            int r = i / BN, c = i % BN, k = k0 + r, col = col0 + c;
            Bs[r][c] = k < K && col < N ? B[(size_t)k * N + col] : __float2half(0.0f);
        }
        __syncthreads();
        for (int kk = 0; kk < BK; kk += WMMA) {
            wmma::fragment<wmma::matrix_a, WMMA, WMMA, WMMA, half, wmma::row_major> a[FRAGS_M];
            wmma::fragment<wmma::matrix_b, WMMA, WMMA, WMMA, half, wmma::row_major> b[FRAGS_N];
            for (int i = 0; i < FRAGS_M; ++i) wmma::load_matrix_sync(a[i], &As[warp_m * WM + i * WMMA][kk], A_LD);
            for (int j = 0; j < FRAGS_N; ++j) wmma::load_matrix_sync(b[j], &Bs[kk][warp_n * WN + j * WMMA], B_LD);
            for (int i = 0; i < FRAGS_M; ++i)
                for (int j = 0; j < FRAGS_N; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }

    half* mine = scratch[warp];
    for (int i = 0; i < FRAGS_M; ++i) {
        for (int j = 0; j < FRAGS_N; ++j) {
            wmma::store_matrix_sync(mine, acc[i][j], WMMA, wmma::mem_row_major);
            __syncwarp();
            int tile_row = row0 + warp_m * WM + i * WMMA, tile_col = col0 + warp_n * WN + j * WMMA;
            for (int e = lane; e < WMMA * WMMA; e += 32) {
                int row = tile_row + e / WMMA, col = tile_col + e % WMMA;
                if (row < M && col < N) {
                    size_t at = (size_t)row * N + col;
                    C[at] = __float2half_rn(alpha * __half2float(mine[e]) + beta * __half2float(C[at]));
                }
            }
            __syncwarp();
        }
    }
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    gemm_wmma_half_acc<<<grid, THREADS>>>(A, B, C, M, N, K, alpha, beta);
}
