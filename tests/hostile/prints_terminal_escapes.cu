// expect: WRONG_ANSWER
// Prints terminal control sequences meant for the teacher's terminal (clear the screen, set the
// window title, a green "ACCEPTED" banner, a bell), then leaves C wrong so its output is shown in
// the report. Shown output is inert: control characters are escaped, never sent raw.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = 0.0f;
        for (int i = 0; i < N; ++i) sum += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

static void launch(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    std::printf("\x1b[2J\x1b[H\x1b]0;all tests passed\x07\x1b[1;32m  ACCEPTED  \x1b[0m\r\x1b[8m\a\n");
    std::fflush(stdout);
    launch(A, B, C, M, N, K);
    cudaMemset(C, 0, sizeof(float));  // one wrong element: the report shows the output above
}
