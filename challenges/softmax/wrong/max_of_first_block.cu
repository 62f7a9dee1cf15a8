// expect: WRONG_ANSWER
// expect-message: NaN
// Three passes like level 1 of the ladder, but the maximum pass stops after its first round: each
// block of 256 writes the maximum of its elements to scratch, and the sum and quotient passes then
// read partials[0], the first block's maximum, as if it were the maximum of all. The second round
// over the partial maxima is missing.
//
// Subtracting any constant leaves a softmax unchanged in exact arithmetic, so this is right whenever
// nothing overflows: with LeetGPU's values (uniform in [-10, 10]) the first block's maximum is within
// a hair of the true one, and up to N = 256 it is the true one. It fails when the maximum lies more
// than about 88 above the first block's: exp(x - m) overflows, the sum is infinite and the quotients
// NaN. From N = 4,096 on the first N / 16 elements lie 200 below the rest (statement.md, "Inputs"),
// a whole block of 256 at N = 4,097.
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;

__global__ void block_max(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    partial[tid] = i < count ? in[i] : -INFINITY;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = fmaxf(partial[tid], partial[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

// One block adds exp(x - *top) over all elements, a loop per thread and a tree.
__global__ void sum_exp(const float* in, const float* top, float* total, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    float m = *top, s = 0.0f;
    for (unsigned i = tid; i < count; i += BLOCK) s += expf(in[i] - m);
    partial[tid] = s;
    __syncthreads();
    for (unsigned step = BLOCK / 2; step > 0; step >>= 1) {
        if (tid < step) partial[tid] += partial[tid + step];
        __syncthreads();
    }
    if (tid == 0) *total = partial[0];
}

__global__ void quotients(const float* in, const float* top, const float* total, float* out, unsigned count) {
    float m = *top, s = *total;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += gridDim.x * BLOCK) out[i] = expf(in[i] - m) / s;
}

static float* scratch = nullptr;
static size_t scratch_floats = 0;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N, blocks = (count - 1) / BLOCK + 1;
    if (blocks + 1 > scratch_floats) {
        cudaFree(scratch);
        cudaMalloc(&scratch, (blocks + 1) * sizeof(float));
        scratch_floats = blocks + 1;
    }
    float* total = scratch + blocks;
    block_max<<<blocks, BLOCK>>>(input, scratch, count);
    // BUG: scratch[0] is the first block's maximum; the maxima of the other blocks are never reduced
    sum_exp<<<1, BLOCK>>>(input, scratch, total, count);
    quotients<<<blocks < 64 ? blocks : 64, BLOCK>>>(input, scratch, total, output, count);
}
