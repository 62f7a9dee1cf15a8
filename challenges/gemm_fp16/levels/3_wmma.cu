// expect: ACCEPTED
// Level 3 — tensor cores through WMMA, FP32 accumulators, edges padded in shared memory.
//
// Over level 2: the multiply-adds run on the tensor cores. nvcuda::wmma multiplies a 16×16 tile of
// half by another and adds the result to a 16×16 FP32 accumulator in one warp-wide operation
// (mma_sync): on an H100 or H200 that is about fifteen times the FP32 throughput of the ordinary
// cores. The products are exact and the accumulator is FP32, so the result is as accurate as level
// 1's (statement.md, "Accuracy").
//
// A block of 4 warps computes a 64×64 tile of C, each warp a 32×32 quarter as 2×2 accumulator
// fragments. For each 32-wide step along k the block copies a 64×32 tile of A and a 32×64 tile of
// B into shared memory, writing zeros wherever the tile reaches past the matrix: WMMA always
// multiplies whole 16×16 tiles, so the zeros are how any M, N and K work (they add nothing to the
// sums). Each thread issues all 32 of its loads before it stores any of them (see the comment in
// the loop: stored as it loads, this kernel took three times as long at 1024³ on an H200). Each
// warp then loads its fragments from shared memory (load_matrix_sync wants 32-byte aligned tiles:
// the rows are padded by 8 halves, 16 bytes, which keeps that and spreads the rows over the memory
// banks) and issues 2 × 2 × 2 mma_sync per step.
//
// The epilogue: a warp stores each accumulator fragment to a 16×16 FP32 scratch tile of its own in
// shared memory (a fragment's layout across the lanes is unspecified, so it is read back from
// there), and each lane then computes alpha·acc + beta·C for its elements in FP32, rounds once to
// half, and writes the ones that lie inside C.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int WMMA = 16;                    // the fragment shape: 16×16×16
constexpr int BM = 64, BN = 64, BK = 32;    // block tile of C, and the k step
constexpr int WARPS_M = 2, WARPS_N = 2;     // 4 warps in a 2×2 grid
constexpr int WM = BM / WARPS_M;            // 32×32 of C per warp
constexpr int WN = BN / WARPS_N;
constexpr int FRAGS_M = WM / WMMA, FRAGS_N = WN / WMMA;  // 2×2 accumulators per warp
constexpr int THREADS = WARPS_M * WARPS_N * 32;
constexpr int PAD = 8;                      // halves added to each shared row (16 bytes)
constexpr int A_LD = BK + PAD, B_LD = BN + PAD;
constexpr int A_PER_THREAD = BM * BK / THREADS;  // elements of A each thread copies per k step: 16
constexpr int B_PER_THREAD = BK * BN / THREADS;  // and of B: 16

__global__ void __launch_bounds__(THREADS) gemm_wmma(const half* A, const half* B, half* C, int M, int N, int K,
                                                     float alpha, float beta) {
    __shared__ __align__(32) half As[BM][A_LD];
    __shared__ __align__(32) half Bs[BK][B_LD];
    __shared__ __align__(32) float scratch[WARPS_M * WARPS_N][WMMA * WMMA];

    int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, WMMA, WMMA, WMMA, float> acc[FRAGS_M][FRAGS_N];
    for (int i = 0; i < FRAGS_M; ++i)
        for (int j = 0; j < FRAGS_N; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Neighbouring threads take neighbouring elements of a row: coalesced reads of A and B. All
        // of a thread's loads are issued before any store to shared memory: A and B are generic
        // pointers, which the compiler cannot prove are not into shared memory, so a load placed after
        // a shared store would wait for it, and 32 loads would pay their latency one after another.
        half a_vals[A_PER_THREAD], b_vals[B_PER_THREAD];
#pragma unroll
        for (int s = 0; s < A_PER_THREAD; ++s) {
            int i = tid + s * THREADS, row = row0 + i / BK, k = k0 + i % BK;
            a_vals[s] = row < M && k < K ? A[(size_t)row * K + k] : __float2half(0.0f);
        }
#pragma unroll
        for (int s = 0; s < B_PER_THREAD; ++s) {
            int i = tid + s * THREADS, k = k0 + i / BN, col = col0 + i % BN;
            b_vals[s] = k < K && col < N ? B[(size_t)k * N + col] : __float2half(0.0f);
        }
#pragma unroll
        for (int s = 0; s < A_PER_THREAD; ++s) As[(tid + s * THREADS) / BK][(tid + s * THREADS) % BK] = a_vals[s];
#pragma unroll
        for (int s = 0; s < B_PER_THREAD; ++s) Bs[(tid + s * THREADS) / BN][(tid + s * THREADS) % BN] = b_vals[s];
        __syncthreads();  // the tiles are complete before any warp loads fragments from them

        for (int kk = 0; kk < BK; kk += WMMA) {
            wmma::fragment<wmma::matrix_a, WMMA, WMMA, WMMA, half, wmma::row_major> a[FRAGS_M];
            wmma::fragment<wmma::matrix_b, WMMA, WMMA, WMMA, half, wmma::row_major> b[FRAGS_N];
            for (int i = 0; i < FRAGS_M; ++i) wmma::load_matrix_sync(a[i], &As[warp_m * WM + i * WMMA][kk], A_LD);
            for (int j = 0; j < FRAGS_N; ++j) wmma::load_matrix_sync(b[j], &Bs[kk][warp_n * WN + j * WMMA], B_LD);
            for (int i = 0; i < FRAGS_M; ++i)
                for (int j = 0; j < FRAGS_N; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        __syncthreads();  // every warp is done with the tiles before the next step overwrites them
    }

    // Epilogue, one fragment at a time through this warp's scratch tile.
    float* mine = scratch[warp];
    for (int i = 0; i < FRAGS_M; ++i) {
        for (int j = 0; j < FRAGS_N; ++j) {
            wmma::store_matrix_sync(mine, acc[i][j], WMMA, wmma::mem_row_major);
            __syncwarp();  // the whole fragment is in scratch before any lane reads it
            int tile_row = row0 + warp_m * WM + i * WMMA, tile_col = col0 + warp_n * WN + j * WMMA;
            for (int e = lane; e < WMMA * WMMA; e += 32) {
                int row = tile_row + e / WMMA, col = tile_col + e % WMMA;
                if (row < M && col < N) {
                    size_t at = (size_t)row * N + col;
                    float result = beta == 0.0f ? alpha * mine[e] : alpha * mine[e] + beta * __half2float(C[at]);
                    C[at] = __float2half_rn(result);
                }
            }
            __syncwarp();  // every lane has read scratch before the next fragment is stored there
        }
    }
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    gemm_wmma<<<grid, THREADS>>>(A, B, C, M, N, K, alpha, beta);
}
