// expect: ACCEPTED
// backends: cuda
// Launches the correct naive kernel on its own non-blocking stream and returns without waiting.
// Correct: the grader synchronizes the whole device after solve, before checking, so the result is
// complete when read (this corpus grades correctness). Timed (`grader submit`), the kernel escapes the
// events (the end event is queued on the default stream as solve returns, which a non-blocking stream
// does not wait for) but not the clocks around the whole sample: it is timed end to end, its real time
// (tests/test_gpu_grading.py).
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
    // Created once and kept; it does not synchronize with the legacy default stream.
    static cudaStream_t side = [] {
        cudaStream_t s = nullptr;
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
        return s;
    }();
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block, 0, side>>>(A, B, C, M, N, K);
    // no cudaStreamSynchronize(side): the kernel may still be running when solve returns
}
