// expect: ACCEPTED
// Level 1 — naive global memory, coalesced thread mapping.
//
// One thread per element of C. Threads next to each other in x take neighbouring *columns*, so
// a warp (two rows of 16 threads in a 16×16 block) reads two runs of 16 consecutive elements of
// B, coalesced, and each half reads one element of A, a broadcast. Every multiply-add loads two values from global memory, so the
// kernel is limited by memory traffic: about 2 loads per 2 FLOPs, far from the arithmetic peak.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;

    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        acc += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    }
    C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
