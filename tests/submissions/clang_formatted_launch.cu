// expect: ACCEPTED
// A tiled matmul whose launch clang-format wrote without knowing CUDA: `<< <` and `>> >` with spaces
// between the chevrons, the configuration over two lines and the arguments on a third. nvcc reads
// `<<` then `<` as a launch's `<<<` (and `>>` then `>` as its `>>>`), so this compiles and runs on a
// GPU, and the emulator must read it as nvcc does (issue 19). The kernel is a template, its shared
// tiles are dynamic shared memory, sized by the launch's third argument.
#include <cuda_runtime.h>

template <int TILE>
__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    extern __shared__ float tiles[];  // As, then Bs: TILE × TILE each
    float* As = tiles;
    float* Bs = tiles + TILE * TILE;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        As[ty * TILE + tx] = (row < M && t + tx < N) ? A[(size_t)row * N + t + tx] : 0.0f;
        Bs[ty * TILE + tx] = (t + ty < N && col < K) ? B[(size_t)(t + ty) * K + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) acc += As[ty * TILE + i] * Bs[i * TILE + tx];
        __syncthreads();  // the next tile overwrites what this one read
    }
    if (row < M && col < K) C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    constexpr int TILE = 16;
    dim3 block(TILE, TILE);
    dim3 grid((K + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled<TILE> << <grid, block,
                           2 * TILE * TILE * sizeof(float) >> >
        (A, B, C, M, N, K);
}
