// expect: RUNTIME_ERROR
// expect-message: cudaLaunchCooperativeKernel
// backends: emulator
// A correct grid-barrier reduction launched with <<<...>>> instead of cudaLaunchCooperativeKernel.
// grid.sync() is valid only in a cooperative launch: elsewhere CUDA's grid group is not valid and sync()
// traps (or, where it gets past that, hangs when the blocks are not all resident), behaviour no GPU
// promises, so only the emulator promises a verdict: it fails the launch (cudaErrorLaunchFailure, as
// the trap does) and says how to launch the kernel.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int BLOCK = 256;
constexpr int BLOCKS = 8;

__global__ void sum_after_grid_barrier(const float* input, float* partials, float* output, int N) {
    __shared__ float sums[BLOCK];
    cg::grid_group grid = cg::this_grid();
    float sum = 0.0f;
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)N; i += grid.size()) sum += input[i];
    sums[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = sums[0];
    grid.sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < BLOCKS; ++b) total += partials[b];
        output[0] = total;
    }
}

extern "C" void solve(const float* input, float* output, int N) {
    float* partials = nullptr;
    cudaMalloc(&partials, BLOCKS * sizeof(float));
    sum_after_grid_barrier<<<BLOCKS, BLOCK>>>(input, partials, output, N);
    cudaDeviceSynchronize();
    cudaFree(partials);
}
