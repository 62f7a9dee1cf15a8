// expect: RACE
// backends: emulator
// A cooperative reduction without its grid barrier: each block writes its partial sum to a scratch
// buffer and block 0 adds them all, but nothing makes block 0 wait for the others' writes, so it may add
// partials that are not there yet (cudaMalloc's memory is garbage). On a GPU the outcome depends on which
// blocks happen to run first; the emulator runs the blocks in forward and in reverse order: forward,
// block 0 runs first and adds garbage; reversed, it runs last and finds every partial. A race. The fix
// is grid.sync() between the writes and the reads (cooperative_grid_sync.cu).
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int BLOCK = 256;

__global__ void sum_without_grid_barrier(const float* input, float* partials, float* output, int N) {
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
    // grid.sync() belongs here
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float total = 0.0f;
        for (unsigned b = 0; b < gridDim.x; ++b) total += partials[b];
        output[0] = total;
    }
}

extern "C" void solve(const float* input, float* output, int N) {
    int blocks = (N + BLOCK - 1) / BLOCK;
    if (blocks > 64) blocks = 64;
    float* partials = nullptr;
    cudaMalloc(&partials, blocks * sizeof(float));
    void* args[] = {&input, &partials, &output, &N};
    cudaLaunchCooperativeKernel((void*)sum_without_grid_barrier, blocks, BLOCK, args, 0, 0);
    cudaFree(partials);
}
