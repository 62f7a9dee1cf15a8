// expect: OUT_OF_BOUNDS
// expect-message: past its end
// The naive kernel without its column bounds check: threads past the last column write into the
// next row of C, and on the last row past the end of C. No shared memory is involved, so this is a
// stray write, not a missing barrier; the report must say so.
#include <cuda_runtime.h>

__global__ void matmul_no_column_check(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M) {  // (the `col < K` test that belongs here is missing)
        float sum = 0.0f;
        for (int i = 0; i < N; ++i) sum += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 threads(16, 16);
    dim3 blocks((K + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y);
    matmul_no_column_check<<<blocks, threads>>>(A, B, C, M, N, K);
}
