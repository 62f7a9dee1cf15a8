// expect: RUNTIME_ERROR
// expect-message: thread
// solve starts a detached host thread and returns at once; 200 ms later the thread computes C on
// the CPU and copies it in, long after the grader read C (still NaN). The grader must fail the
// case and say a thread was left running. The thread does its one job and exits.
#include <chrono>
#include <cuda_runtime.h>
#include <thread>
#include <vector>

static void compute_later(const float* A, const float* B, float* C, int M, int N, int K) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    // By now the grader may have released these buffers: the copies can fail, crash the worker or
    // land in whatever lives there now, which is exactly why work must not outlive solve.
    std::vector<float> a((size_t)M * N), b((size_t)N * K), c((size_t)M * K, 0.0f);
    if (cudaMemcpy(a.data(), A, a.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return;
    if (cudaMemcpy(b.data(), B, b.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) return;
    for (int i = 0; i < M; ++i)
        for (int n = 0; n < N; ++n) {
            float x = a[(size_t)i * N + n];
            for (int k = 0; k < K; ++k) c[(size_t)i * K + k] += x * b[(size_t)n * K + k];
        }
    cudaMemcpy(C, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    std::thread(compute_later, A, B, C, M, N, K).detach();  // BUG: the work outlives the call
}
