// expect: COMPILE_ERROR
// expect-message: ran out of memory
// An initialized 8 GiB device array: the compiler would need more than 8 GiB to build it. A compile
// may use 4 GiB per process (a hard limit), so it stops within seconds with a message saying why,
// instead of taking the machine's memory from every other student.
#include <cuda_runtime.h>

__device__ char ballast[1ull << 33] = {1};

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = ballast[0] - 1;
        for (int i = 0; i < N; ++i) sum += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16), grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
