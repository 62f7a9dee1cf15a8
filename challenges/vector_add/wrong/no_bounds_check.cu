// expect: OUT_OF_BOUNDS
// expect-message: past its end
// One thread per element without `if (i < N)`: the grid is rounded up to whole blocks, so the last
// block's extra threads read past the ends of A and B and write past the end of C. Every N that is
// not a multiple of 256 does it (N = 1: 255 stray writes).
#include <cuda_runtime.h>

__global__ void vector_add_unchecked(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    C[i] = A[i] + B[i];  // BUG: no bounds check
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    vector_add_unchecked<<<(N + threads - 1) / threads, threads>>>(A, B, C, N);
}
