// expect: ACCEPTED
// A shared-memory tiled kernel that reads its tiles back as float4: `__shared__ float` arrays
// reinterpreted as 16-byte vectors, as many LeetGPU submissions do. Valid CUDA because shared
// arrays start 16-byte aligned and every row of the tiles is a multiple of 16 bytes.
#include <cuda_runtime.h>

constexpr int TILE = 16;

__global__ void matmul_float4_tiles(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    __shared__ float Ac[TILE][TILE];
    __shared__ float Bc[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        As[ty][tx] = (row < M && t + tx < N) ? A[(size_t)row * N + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < N && col < K) ? B[(size_t)(t + ty) * K + col] : 0.0f;
        __syncthreads();
        // Whole rows of the tiles copied as float4 into a second pair of tiles, then read back as
        // float4: 16-byte loads and stores on shared memory.
        if (tx < TILE / 4) {
            reinterpret_cast<float4*>(&Ac[ty][0])[tx] = reinterpret_cast<const float4*>(&As[ty][0])[tx];
            reinterpret_cast<float4*>(&Bc[ty][0])[tx] = reinterpret_cast<const float4*>(&Bs[ty][0])[tx];
        }
        __syncthreads();
        const float4* a_row = reinterpret_cast<const float4*>(&Ac[ty][0]);
        for (int i = 0; i < TILE / 4; ++i) {
            float4 a = a_row[i];
            acc += a.x * Bc[4 * i][tx] + a.y * Bc[4 * i + 1][tx] + a.z * Bc[4 * i + 2][tx] + a.w * Bc[4 * i + 3][tx];
        }
        __syncthreads();
    }
    if (row < M && col < K) C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((K + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_float4_tiles<<<grid, block>>>(A, B, C, M, N, K);
}
