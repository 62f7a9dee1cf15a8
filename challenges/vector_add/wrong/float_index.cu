// expect: WRONG_ANSWER
// expect-message: never written
// The index passes through a float. A float holds every integer only up to 2^24 = 16,777,216;
// above that it holds even ones only, and an odd index rounds to an even neighbour. At
// N = 16,777,219 (the float_index case) thread 2^24 + 1 lands on 2^24, which thread 2^24 also
// writes, and element 2^24 + 1 is never written. Every smaller N is right, random sizes included.
#include <cuda_runtime.h>

__global__ void vector_add_float_index(const float* A, const float* B, float* C, int N) {
    float position = blockIdx.x * blockDim.x + threadIdx.x;  // BUG: rounds above 2^24
    int i = (int)position;
    if (i < N) C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    vector_add_float_index<<<(N + threads - 1) / threads, threads>>>(A, B, C, N);
}
