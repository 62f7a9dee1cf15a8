// expect: WRONG_ANSWER
// expect-message: never written
// The grid is N / 256 blocks, rounded down, patched to at least one block so that small N no longer
// fails to launch. Up to 256 elements that one block covers everything; past that, the last
// N % 256 elements belong to a block that is never launched and stay NaN (N = 257: the last one).
#include <cuda_runtime.h>

__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    int blocks = N / threads;  // BUG: rounds down, drops the partial last block
    if (blocks == 0) blocks = 1;
    vector_add<<<blocks, threads>>>(A, B, C, N);
}
