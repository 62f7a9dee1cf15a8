// Vector addition: C[i] = A[i] + B[i] for 0 <= i < N, in FP32.
//   A, B and C are device pointers to N floats each; N is any size from 1 up.
// C arrives filled with NaN: write every element. `grader show vector_add` prints the full statement.
#include <cuda_runtime.h>

__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    // Your kernel here: compute one or more elements of C.
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    int blocks = (N + threads - 1) / threads;
    vector_add<<<blocks, threads>>>(A, B, C, N);
}
