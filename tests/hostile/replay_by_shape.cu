// expect: WRONG_ANSWER
// Computes C the first time it sees a shape (M, N, K), keeps a copy, and on every later call of that
// shape copies the old answer back without reading A or B: timing loops get it for free. The grader
// must call a shape it has seen again with fresh values (its re-check case) and catch the replay.
#include <cuda_runtime.h>
#include <map>
#include <tuple>

constexpr int BLOCK = 16;
constexpr size_t MAX_CACHED = 64;  // shapes remembered; past that, just compute

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

static std::map<std::tuple<int, int, int>, float*> g_answers;  // shape -> device copy of its first C

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    size_t bytes = (size_t)M * K * sizeof(float);
    auto key = std::make_tuple(M, N, K);
    auto found = g_answers.find(key);
    if (found != g_answers.end()) {
        // BUG: replays the answer of an earlier call, whatever A and B hold now
        cudaMemcpy(C, found->second, bytes, cudaMemcpyDeviceToDevice);
        return;
    }
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
    float* copy = nullptr;
    if (g_answers.size() < MAX_CACHED) {
        if (cudaMalloc(&copy, bytes) == cudaSuccess) {
            cudaMemcpy(copy, C, bytes, cudaMemcpyDeviceToDevice);
            g_answers[key] = copy;
        } else {
            cudaGetLastError();  // no room: this shape is simply not cached
        }
    }
}
