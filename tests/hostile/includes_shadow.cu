// expect: COMPILE_ERROR
// requires: sandbox
// Includes the host's password hashes: `#include "/etc/shadow"`. A compile error either way (the
// file is not C++), but where the compiler can read it, its error messages quote the file's lines,
// root's hash among them, into the build log that the student is shown. The compiler runs boxed as
// an unprivileged uid, so the include fails as "Permission denied" (or "No such file"), and the
// harness checks that root's line of the host's /etc/shadow reaches no output.
#include <cuda_runtime.h>
#include "/etc/shadow"

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = 0.0f;
        for (int i = 0; i < N; ++i) sum += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
