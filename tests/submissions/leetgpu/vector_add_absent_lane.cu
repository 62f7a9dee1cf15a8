// expect: ACCEPTED
// strict: WRONG_ANSWER
// backends: emulator
// Blocks of 16 threads, each adding what a full-warp shuffle brings from lane i ^ 16, a lane the block does not
// have: undefined in CUDA, 0 on an H200 (so LeetGPU's judge sees the right sum); the emulator's strict orders
// give the caller's own value back, and the sum is wrong.
#include <cuda_runtime.h>

__global__ void add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = i < N ? A[i] : 0.0f;
    float from_absent = __shfl_xor_sync(0xffffffffu, a, 16);
    if (i < N) C[i] = a + B[i] + from_absent;
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    add<<<(N + 15) / 16, 16>>>(A, B, C, N);
}
