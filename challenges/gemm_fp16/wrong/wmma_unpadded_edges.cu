// expect: WRONG_ANSWER
// expect-message: NaN or infinite
// A tensor-core kernel written for sizes that are multiples of 16 (all of LeetGPU's tests are): each
// warp loads its 16×16 fragments of A and B straight from global memory with load_matrix_sync and
// takes whole 16-wide steps along k. Its stores are guarded (the accumulator goes through shared
// memory and only elements inside C are written), so C's neighbours are safe; its loads are not.
// Where K is not a multiple of 16 the last step reads past the end of each row of A, that is the
// first elements of the next row, and past the last row of B, beyond the end of the buffer; where M
// or N is not, the edge warps read rows of A past M and columns of B past N. The first kind changes
// the answer (a row's sum picks up products of its neighbour's values); the reads past the end of a
// buffer pick up whatever lies there (the grader's guard, NaN, spoils the sum). The emulator names
// the first such read: at 1×1×1, the very first case, the warp reads 16 rows of a 1×1 matrix.
// (WMMA also wants ldm, here K and N, to be a multiple of 8 halves: another thing this layout breaks.)
// The fix: stage the tiles through shared memory with zeros past every edge (levels/3_wmma.cu), or
// handle the edges without tensor cores.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int WMMA = 16;
constexpr int WARPS = 4;  // one 16×16 tile of C per warp

__global__ void gemm_wmma_edges(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    __shared__ __align__(32) float scratch[WARPS][WMMA * WMMA];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int tile_row = blockIdx.y * WMMA;
    int tile_col = (blockIdx.x * WARPS + warp) * WMMA;
    if (tile_col >= N) return;  // a whole warp past C's right edge: nothing to do

    wmma::fragment<wmma::accumulator, WMMA, WMMA, WMMA, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += WMMA) {
        wmma::fragment<wmma::matrix_a, WMMA, WMMA, WMMA, half, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, WMMA, WMMA, WMMA, half, wmma::row_major> b;
        wmma::load_matrix_sync(a, A + (size_t)tile_row * K + k0, K);  // BUG: 16 × 16 whatever lies there
        wmma::load_matrix_sync(b, B + (size_t)k0 * N + tile_col, N);  // BUG: likewise
        wmma::mma_sync(acc, a, b, acc);
    }
    wmma::store_matrix_sync(scratch[warp], acc, WMMA, wmma::mem_row_major);
    __syncwarp();
    for (int e = lane; e < WMMA * WMMA; e += 32) {
        int row = tile_row + e / WMMA, col = tile_col + e % WMMA;
        if (row < M && col < N) {
            size_t at = (size_t)row * N + col;
            C[at] = __float2half_rn(alpha * scratch[warp][e] + beta * __half2float(C[at]));
        }
    }
}

extern "C" void solve(const half* A, const half* B, half* C, int M, int N, int K, float alpha, float beta) {
    dim3 grid((N + WMMA * WARPS - 1) / (WMMA * WARPS), (M + WMMA - 1) / WMMA);
    gemm_wmma_edges<<<grid, WARPS * 32>>>(A, B, C, M, N, K, alpha, beta);
}
