// expect: ACCEPTED
// strict: WRONG_ANSWER
// backends: emulator
// Adds a shared-memory slot no thread ever writes: zeros on a fresh GPU in practice (LeetGPU's judge sees the
// right sum), garbage by CUDA's rules. Parity runs it as a GPU does; the strict checks fill shared memory with
// NaN and catch it.
#include <cuda_runtime.h>

__global__ void add(const float* A, const float* B, float* C, int N) {
    __shared__ float never_set[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i] + never_set[threadIdx.x];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    add<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
