// expect: ACCEPTED
// One warp per element of C: the lanes split the inner dimension and combine their partial sums
// with __shfl_down_sync. Exercises warp shuffles, including partial sums on lanes with no work.
#include <cuda_runtime.h>

constexpr int WARP = 32;
constexpr int WARPS_PER_BLOCK = 8;

__global__ void matmul_warp_dot(const float* A, const float* B, float* C, int M, int N, int K) {
    int warp = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    int row = warp / K, col = warp % K;
    bool valid = warp < M * K;  // the whole warp agrees, so every lane reaches the shuffles

    float partial = 0.0f;
    if (valid) {
        for (int n = lane; n < N; n += WARP) partial += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    }
    for (int offset = WARP / 2; offset > 0; offset /= 2) {
        partial += __shfl_down_sync(0xffffffffu, partial, offset);
    }
    if (valid && lane == 0) C[(size_t)row * K + col] = partial;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    long long warps = (long long)M * K;
    int blocks = (int)((warps + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK);
    matmul_warp_dot<<<blocks, WARPS_PER_BLOCK * WARP>>>(A, B, C, M, N, K);
}
