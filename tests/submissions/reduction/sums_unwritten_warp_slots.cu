// expect: WRONG_ANSWER
// expect-message: shared memory no thread had written
// backends: emulator
// Blocks of 256 threads (8 warps) each reduce their warp sums in shared memory, but the first warp then
// adds all 32 slots of the warp-sum array, as if every block had 32 warps: slots 8..31 were never
// written. On a GPU they hold whatever an earlier block left there (often zeros, so the sum may come
// out right, or not: its verdict there is a matter of luck); in the emulator shared memory holds a NaN
// of its own until written, and the report says the NaN came from there.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void partial_sums(const float* input, float* output, int n) {
    __shared__ float warp_sums[32];
    int i = blockIdx.x * THREADS + threadIdx.x;
    float value = i < n ? input[i] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = value;
    __syncthreads();
    if (threadIdx.x < 32) {
        float total = warp_sums[threadIdx.x];  // slots 8..31: never written
        for (int offset = 16; offset > 0; offset /= 2) total += __shfl_down_sync(0xffffffffu, total, offset);
        if (threadIdx.x == 0) atomicAdd(output, total);
    }
}

extern "C" void solve(const float* input, float* output, int N) {
    cudaMemsetAsync(output, 0, sizeof(float));
    partial_sums<<<(N + THREADS - 1) / THREADS, THREADS>>>(input, output, N);
}
