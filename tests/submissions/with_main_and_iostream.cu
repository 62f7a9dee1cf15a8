// expect: ACCEPTED
// A LeetGPU-style file that carries its own test program: <iostream>, a host helper and main().
// The grader calls only solve; main() must not get in the way of building the file.
#include <cuda_runtime.h>
#include <iostream>
#include <vector>

__global__ void matmul_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = 0.0f;
        for (int i = 0; i < N; ++i) sum += A[row * N + i] * B[i * K + col];
        C[row * K + col] = sum;
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 threads(16, 16);
    dim3 blocks((K + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y);
    matmul_kernel<<<blocks, threads>>>(A, B, C, M, N, K);
    cudaDeviceSynchronize();
}

static void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        std::cerr << what << ": " << cudaGetErrorString(status) << std::endl;
        std::exit(1);
    }
}

int main() {
    const int M = 2, N = 3, K = 2;
    std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12}, c(M * K);
    float *da, *db, *dc;
    check(cudaMalloc(&da, a.size() * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&db, b.size() * sizeof(float)), "cudaMalloc");
    check(cudaMalloc(&dc, c.size() * sizeof(float)), "cudaMalloc");
    cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice);
    solve(da, db, dc, M, N, K);
    cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost);
    for (float v : c) std::cout << v << " ";
    std::cout << std::endl;
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    return 0;
}
