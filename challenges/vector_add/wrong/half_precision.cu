// expect: WRONG_ANSWER
// expect-message: reduced-precision
// Converts both inputs to half, adds in half, converts back. Half keeps 11 significant bits where
// float keeps 24, so an element can be off by about 2^-12 of its size: the worst element of a case
// is 36 to 8,000 times the allowed error (statement.md, "Accuracy").
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void vector_add_half(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = __half2float(__hadd(__float2half(A[i]), __float2half(B[i])));  // BUG: FP16 arithmetic
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    vector_add_half<<<(N + threads - 1) / threads, threads>>>(A, B, C, N);
}
