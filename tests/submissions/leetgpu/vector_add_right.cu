// expect: ACCEPTED
// strict: ACCEPTED
// One thread per element, with a grid-stride loop so any N works with a capped grid. Graded against the
// fixture's 1_vector_add (tests/leetgpu_fixture), whose N is a size_t that the starter declares `int`.
#include <cuda_runtime.h>

__global__ void add(const float* A, const float* B, float* C, int N) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x) C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    const int threads = 256;
    int blocks = (N + threads - 1) / threads;
    if (blocks > 1024) blocks = 1024;
    add<<<blocks, threads>>>(A, B, C, N);
    if (cudaGetLastError() != cudaSuccess) return;
    cudaDeviceSynchronize();
}
