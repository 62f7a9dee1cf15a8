// expect: ACCEPTED
// strict: ACCEPTED
// Two passes, right for any N: blocks reduce grid-stride slices into per-block partial minima and maxima
// (a shared-memory tree with a barrier at every step), then one block reduces the partials.
#include <cfloat>
#include <cuda_runtime.h>

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 128;

// Reduces each thread's (lo, hi) across the block; thread 0 ends up with the block's pair.
__device__ void block_min_max(float lo, float hi, float* out_lo, float* out_hi) {
    __shared__ float s_lo[THREADS], s_hi[THREADS];
    s_lo[threadIdx.x] = lo;
    s_hi[threadIdx.x] = hi;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            s_lo[threadIdx.x] = fminf(s_lo[threadIdx.x], s_lo[threadIdx.x + half]);
            s_hi[threadIdx.x] = fmaxf(s_hi[threadIdx.x], s_hi[threadIdx.x + half]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        *out_lo = s_lo[0];
        *out_hi = s_hi[0];
    }
}

__global__ void partials(const float* x, int N, float* part_lo, float* part_hi) {
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < N; i += gridDim.x * THREADS) {
        lo = fminf(lo, x[i]);
        hi = fmaxf(hi, x[i]);
    }
    block_min_max(lo, hi, &part_lo[blockIdx.x], &part_hi[blockIdx.x]);
}

__global__ void combine(const float* part_lo, const float* part_hi, int parts, float* lo, float* hi) {
    float l = FLT_MAX, h = -FLT_MAX;
    for (int i = threadIdx.x; i < parts; i += THREADS) {
        l = fminf(l, part_lo[i]);
        h = fmaxf(h, part_hi[i]);
    }
    block_min_max(l, h, lo, hi);
}

extern "C" void solve(const float* x, float* lo, float* hi, int N) {
    int blocks = (N + THREADS - 1) / THREADS;
    if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    float* scratch = nullptr;
    if (cudaMalloc(&scratch, 2 * blocks * sizeof(float)) != cudaSuccess) return;
    partials<<<blocks, THREADS>>>(x, N, scratch, scratch + blocks);
    combine<<<1, THREADS>>>(scratch, scratch + blocks, blocks, lo, hi);
    cudaDeviceSynchronize();
    cudaFree(scratch);
}
