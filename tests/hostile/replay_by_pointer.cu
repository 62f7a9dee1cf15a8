// expect: WRONG_ANSWER
// Computes C on the first call with a given (A, B, C) pointer triple, keeps a copy, and replays it on
// later calls with the same pointers without reading A or B: timing loops reuse their buffers. Freed
// buffers come back at the same addresses, so the grader's fresh values there must expose the replay.
#include <cuda_runtime.h>

constexpr int BLOCK = 16;
constexpr int SLOTS = 64;  // pointer triples remembered; past that, just compute

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

struct Slot {
    const float* A;
    const float* B;
    float* C;
    size_t bytes;   // the answer's size: a reused address with another shape is a miss, never an overrun
    float* answer;  // device copy of the first C computed for these pointers
};
static Slot g_slots[SLOTS];
static int g_used = 0;

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    size_t bytes = (size_t)M * K * sizeof(float);
    for (int i = 0; i < g_used; ++i) {
        const Slot& s = g_slots[i];
        if (s.A == A && s.B == B && s.C == C && s.bytes == bytes) {
            // BUG: same addresses are taken to mean same inputs; the values are never looked at
            cudaMemcpy(C, s.answer, bytes, cudaMemcpyDeviceToDevice);
            return;
        }
    }
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
    float* copy = nullptr;
    if (g_used < SLOTS) {
        if (cudaMalloc(&copy, bytes) == cudaSuccess) {
            cudaMemcpy(copy, C, bytes, cudaMemcpyDeviceToDevice);
            g_slots[g_used++] = Slot{A, B, C, bytes, copy};
        } else {
            cudaGetLastError();  // no room: these pointers are simply not cached
        }
    }
}
