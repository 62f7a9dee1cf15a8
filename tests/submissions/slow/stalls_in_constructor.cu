// expect: TIMEOUT
// expect-message: while the library was still loading
// A correct kernel whose library never finishes loading: a static constructor sleeps a minute before
// solve can ever be called. The worker's own start-up limit is 120 s; the whole job's bound, which
// counts the start too, stops it first. Graded by tests/test_job_bound.py with small limits.
#include <cuda_runtime.h>
#include <unistd.h>

constexpr int BLOCK = 16;

__attribute__((constructor)) static void stall() { sleep(60); }

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
