// expect: RUNTIME_ERROR
// expect-message: cudaErrorCooperativeLaunchTooLarge
// A cooperative launch of twice as many blocks as the device holds at once. grid.sync() needs every
// block of the grid resident together, so CUDA refuses a cooperative launch larger than the SM count
// times the blocks one SM holds (cudaOccupancyMaxActiveBlocksPerMultiprocessor) with
// cudaErrorCooperativeLaunchTooLarge, and the emulator, whose device has an H100's 132 SMs, refuses it
// too. The kernel never runs and the output is never written.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

constexpr int BLOCK = 256;

__global__ void sum_everywhere(const float* input, float* output, int N) {
    cg::grid_group grid = cg::this_grid();
    if (grid.thread_rank() == 0) output[0] = 0.0f;
    grid.sync();
    float sum = 0.0f;
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)N; i += grid.size()) sum += input[i];
    atomicAdd(output, sum);
}

extern "C" void solve(const float* input, float* output, int N) {
    int sms = 0, per_sm = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sum_everywhere, BLOCK, 0);
    void* args[] = {&input, &output, &N};
    cudaLaunchCooperativeKernel((void*)sum_everywhere, 2 * sms * per_sm, BLOCK, args, 0, 0);
}
