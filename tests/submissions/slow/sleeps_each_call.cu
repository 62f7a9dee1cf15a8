// expect: TIMEOUT
// expect-message: whole job
// A correct kernel whose solve sleeps 1.5 s on the host at every call: under a per-call limit of 2 s,
// and it uses no CPU, so only a bound on the whole job stops it. Graded by tests/test_job_bound.py
// with small limits (a call 2 s, the job 6 s); it lives in a folder of its own because the corpus
// (tests/submissions/*.cu) is graded with the challenge's real limits, where it would take minutes.
#include <cuda_runtime.h>
#include <unistd.h>

constexpr int BLOCK = 16;
constexpr useconds_t SLEEP_US = 1500000;

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
    usleep(SLEEP_US);  // the stall: just under the call's limit, every call
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
