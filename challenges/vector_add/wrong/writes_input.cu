// expect: INPUT_MODIFIED
// expect-message: A is an input
// Adds B into A in place and copies the result to C: C is right, but A is const, and casting the
// const away does not make writing it allowed. The grader compares the inputs with what it uploaded.
#include <cuda_runtime.h>

__global__ void vector_add_in_place(float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        A[i] += B[i];  // BUG: writes an input
        C[i] = A[i];
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    vector_add_in_place<<<(N + threads - 1) / threads, threads>>>(const_cast<float*>(A), B, C, N);
}
