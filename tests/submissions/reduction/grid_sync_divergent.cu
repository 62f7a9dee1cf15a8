// expect: RUNTIME_ERROR
// expect-message: grid.sync() can never complete
// backends: emulator
// A cooperative reduction whose blocks without input return before the grid barrier: block 0 then
// waits at grid.sync() for blocks that will never arrive. CUDA requires every thread of the grid to
// reach each grid.sync(); on a GPU this hangs (TIMEOUT) whenever the grid has such a block, so only the
// emulator promises a verdict: it fails the launch, naming the blocks that wait and those that returned.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int BLOCK = 256;
constexpr int BLOCKS = 16;

__global__ void sum_with_early_return(const float* input, float* partials, float* output, int N) {
    __shared__ float sums[BLOCK];
    cg::grid_group grid = cg::this_grid();
    if (blockIdx.x * BLOCK >= (unsigned)N) return;  // nothing to add here: but grid.sync() waits for this block
    float sum = 0.0f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < N; i += BLOCKS * BLOCK) sum += input[i];
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
        int used = (N + BLOCK - 1) / BLOCK < BLOCKS ? (N + BLOCK - 1) / BLOCK : BLOCKS;
        for (int b = 0; b < used; ++b) total += partials[b];
        output[0] = total;
    }
}

extern "C" void solve(const float* input, float* output, int N) {
    float* partials = nullptr;
    cudaMalloc(&partials, BLOCKS * sizeof(float));
    void* args[] = {&input, &partials, &output, &N};
    cudaLaunchCooperativeKernel((void*)sum_with_early_return, BLOCKS, BLOCK, args, 0, 0);
    cudaDeviceSynchronize();
    cudaFree(partials);
}
