// expect: ACCEPTED
// A correct softmax that allocates its scratch space with cudaMalloc and frees it with cudaFree in every
// call of solve, as many LeetGPU answers do. The host work is real time a call of solve costs: timed,
// it is counted end to end (not IMPOSSIBLE_TIMING, which the events alone would have suggested).
#include <cuda_runtime.h>
#include <cfloat>

constexpr int THREADS = 256;

// Each block's maximum, then each block's sum of exp(x - the global maximum).
__global__ void block_max(const float* input, float* partial, int N) {
    __shared__ float best[THREADS];
    float m = -FLT_MAX;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < N; i += gridDim.x * THREADS) m = fmaxf(m, input[i]);
    best[threadIdx.x] = m;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) best[threadIdx.x] = fmaxf(best[threadIdx.x], best[threadIdx.x + stride]);
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = best[0];
}

__global__ void block_sum(const float* input, const float* partial_max, int blocks, float* partial_sum, int N) {
    __shared__ float sums[THREADS];
    float m = -FLT_MAX;
    for (int b = 0; b < blocks; ++b) m = fmaxf(m, partial_max[b]);
    float s = 0.0f;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < N; i += gridDim.x * THREADS) s += expf(input[i] - m);
    sums[threadIdx.x] = s;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial_sum[blockIdx.x] = sums[0];
}

__global__ void normalize(const float* input, const float* partial_max, const float* partial_sum, int blocks,
                          float* output, int N) {
    float m = -FLT_MAX, s = 0.0f;
    for (int b = 0; b < blocks; ++b) m = fmaxf(m, partial_max[b]);
    for (int b = 0; b < blocks; ++b) s += partial_sum[b];
    int i = blockIdx.x * THREADS + threadIdx.x;
    if (i < N) output[i] = expf(input[i] - m) / s;
}

extern "C" void solve(const float* input, float* output, int N) {
    int blocks = (N + THREADS - 1) / THREADS;
    if (blocks > 256) blocks = 256;
    float* scratch = nullptr;
    cudaMalloc(&scratch, 2 * blocks * sizeof(float));
    block_max<<<blocks, THREADS>>>(input, scratch, N);
    block_sum<<<blocks, THREADS>>>(input, scratch, blocks, scratch + blocks, N);
    normalize<<<(N + THREADS - 1) / THREADS, THREADS>>>(input, scratch, scratch + blocks, blocks, output, N);
    cudaFree(scratch);
}
