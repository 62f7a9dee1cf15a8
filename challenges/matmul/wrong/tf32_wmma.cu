// expect: WRONG_ANSWER
// expect-message: precision
// Tensor-core matmul in TF32 (wmma m16n16k8): shapes and edges are handled correctly, but TF32
// keeps only 10 mantissa bits, so errors reach ~3e-4 relative; the grader must flag the precision loss.
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

constexpr int WM = 16, WN = 16, WK = 8;      // wmma tile: C is WM x WN, k-step WK
constexpr int WARP = 32;
constexpr int WARPS_X = 2, WARPS_Y = 2;      // each block holds 2x2 warps, one C tile per warp
constexpr int WARPS = WARPS_X * WARPS_Y;

__global__ void matmul_tf32(const float* A, const float* B, float* C, int M, int N, int K) {
    // Per-warp staging buffers (wmma needs 32-byte aligned pointers).
    __shared__ __align__(32) float As[WARPS][WM * WK];
    __shared__ __align__(32) float Bs[WARPS][WK * WN];
    __shared__ __align__(32) float Cs[WARPS][WM * WN];

    int warp = threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    int tile_row = (blockIdx.y * WARPS_Y + warp / WARPS_X) * WM;
    int tile_col = (blockIdx.x * WARPS_X + warp % WARPS_X) * WN;
    if (tile_row >= M || tile_col >= K) return;  // whole warp leaves together

    float* a_s = As[warp];
    float* b_s = Bs[warp];
    float* c_s = Cs[warp];

    wmma::fragment<wmma::matrix_a, WM, WN, WK, wmma::precision::tf32, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, WM, WN, WK, wmma::precision::tf32, wmma::row_major> b_frag;
    wmma::fragment<wmma::accumulator, WM, WN, WK, float> c_frag;
    wmma::fill_fragment(c_frag, 0.0f);

    for (int k0 = 0; k0 < N; k0 += WK) {
        // Stage a WM x WK slice of A and a WK x WN slice of B, zero outside the matrices.
        for (int i = lane; i < WM * WK; i += WARP) {
            int r = tile_row + i / WK, c = k0 + i % WK;
            a_s[i] = (r < M && c < N) ? A[(size_t)r * N + c] : 0.0f;
        }
        for (int i = lane; i < WK * WN; i += WARP) {
            int r = k0 + i / WN, c = tile_col + i % WN;
            b_s[i] = (r < N && c < K) ? B[(size_t)r * K + c] : 0.0f;
        }
        __syncwarp();

        wmma::load_matrix_sync(a_frag, a_s, WK);
        wmma::load_matrix_sync(b_frag, b_s, WN);
        for (int t = 0; t < a_frag.num_elements; ++t) a_frag.x[t] = wmma::__float_to_tf32(a_frag.x[t]);
        for (int t = 0; t < b_frag.num_elements; ++t) b_frag.x[t] = wmma::__float_to_tf32(b_frag.x[t]);
        wmma::mma_sync(c_frag, a_frag, b_frag, c_frag);
        __syncwarp();  // staging buffers are overwritten in the next step
    }

    // Store the tile to shared memory, then copy only its in-bounds part to C.
    wmma::store_matrix_sync(c_s, c_frag, WN, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < WM * WN; i += WARP) {
        int r = tile_row + i / WN, c = tile_col + i % WN;
        if (r < M && c < K) C[(size_t)r * K + c] = c_s[i];
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(WARP * WARPS);
    dim3 grid((K + WN * WARPS_X - 1) / (WN * WARPS_X), (M + WM * WARPS_Y - 1) / (WM * WARPS_Y));
    matmul_tf32<<<grid, block>>>(A, B, C, M, N, K);
}
