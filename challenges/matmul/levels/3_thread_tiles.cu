// expect: ACCEPTED
// Level 3 — bank-conflict-free tiling with more work per thread (1-D thread tiles, padding).
//
// Over level 2: each thread computes TM = 8 elements of a column of C instead of one, so one
// value of B read from shared memory feeds 8 multiply-adds held in registers. The A tile is
// stored transposed (k-major) so a thread's 8 operands sit next to each other; the transposing
// store would hit the same bank 8 times per warp, so each row of the tile is padded by 4 floats,
// which spreads those stores over all 32 banks.
#include <cuda_runtime.h>

constexpr int BM = 64, BN = 64, BK = 8;  // block tile: BM×BN of C, BK along the inner dimension
constexpr int TM = 8;                    // outputs per thread, down one column
constexpr int PAD = 4;                   // makes the transposed stores conflict-free
constexpr int THREADS = BM * BN / TM;    // 512

__global__ void __launch_bounds__(THREADS) matmul_thread_tiles(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[BK][BM + PAD];  // transposed: As[k][m]
    __shared__ float Bs[BK][BN];
    int tid = threadIdx.x;
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int thread_col = tid % BN, thread_row = tid / BN;  // a warp shares thread_row: As reads broadcast
    int a_row = tid / BK, a_col = tid % BK;            // which element of A this thread loads
    int b_row = tid / BN, b_col = tid % BN;

    float acc[TM] = {};
    for (int k0 = 0; k0 < N; k0 += BK) {
        int r = row0 + a_row, c = k0 + a_col;
        As[a_col][a_row] = (r < M && c < N) ? A[(size_t)r * N + c] : 0.0f;
        r = k0 + b_row, c = col0 + b_col;
        Bs[b_row][b_col] = (r < N && c < K) ? B[(size_t)r * K + c] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float b = Bs[k][thread_col];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += As[k][thread_row * TM + i] * b;
        }
        __syncthreads();
    }
    int col = col0 + thread_col;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int row = row0 + thread_row * TM + i;
        if (row < M && col < K) C[(size_t)row * K + col] = acc[i];
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 grid((K + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_thread_tiles<<<grid, THREADS>>>(A, B, C, M, N, K);
}
