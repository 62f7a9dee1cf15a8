// expect: ACCEPTED
// expect-emulator: RACE
// The last-warp unrolling of pre-Volta tutorials: a tree in shared memory down to 64 partial sums with
// __syncthreads, then the first warp finishes with six steps on a `volatile` array and no barrier,
// counting on its 32 lanes to run in lockstep. Since Volta (independent thread scheduling) CUDA does
// not promise that: each step reads what another lane writes in the same step, a race by CUDA's rules,
// which needs __syncwarp() between the read and the write (or __shfl_down_sync). On today's GPUs the
// warp happens to stay together here and the sum comes out right, so the GPU grader accepts it and its
// report carries the emulator's warning; the emulator runs lanes one at a time and says RACE.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__device__ void last_warp(volatile float* partial, int lane) {
    partial[lane] += partial[lane + 32];
    partial[lane] += partial[lane + 16];
    partial[lane] += partial[lane + 8];
    partial[lane] += partial[lane + 4];
    partial[lane] += partial[lane + 2];
    partial[lane] += partial[lane + 1];
}

__global__ void block_sums(const float* input, float* total, int n) {
    __shared__ float partial[THREADS];
    int t = threadIdx.x;
    int i = blockIdx.x * THREADS + t;
    partial[t] = i < n ? input[i] : 0.0f;
    __syncthreads();
    for (int half = THREADS / 2; half > 32; half /= 2) {
        if (t < half) partial[t] += partial[t + half];
        __syncthreads();
    }
    if (t < 32) last_warp(partial, t);
    if (t == 0) atomicAdd(total, partial[0]);
}

extern "C" void solve(const float* input, float* output, int N) {
    cudaMemsetAsync(output, 0, sizeof(float));
    block_sums<<<(N + THREADS - 1) / THREADS, THREADS>>>(input, output, N);
}
