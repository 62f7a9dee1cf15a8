// expect: WRONG_ANSWER
// expect-message: NaN
// exp(x) / sum exp(x), without subtracting the maximum first: the formula as written in a textbook,
// and the same number in exact arithmetic. In FP32 it is not: exp(x) overflows to infinity above
// x = 88.7, and is 0 below x = -103.9. Two cases out of three move every input by 100 to 1000, up or
// down (statement.md, "Inputs"): up, every exp is infinite and every quotient inf / inf = NaN; down,
// every exp is 0 and every quotient 0 / 0 = NaN. LeetGPU's [1000, 1, 2, 3] is the first trap. On
// LeetGPU's own values, uniform in [-10, 10], the kernel is right, which is what makes the bug easy to
// ship.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

__global__ void sum_exp(const float* in, float* sums, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x, stride = gridDim.x * BLOCK;
    float s = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + tid; i < count; i += stride) s += expf(in[i]);  // BUG: no - max
    partial[tid] = s;
    __syncthreads();
    for (unsigned step = BLOCK / 2; step > 0; step >>= 1) {
        if (tid < step) partial[tid] += partial[tid + step];
        __syncthreads();
    }
    if (tid == 0) sums[blockIdx.x] = partial[0];
}

__global__ void quotients(const float* in, const float* sums, unsigned blocks, float* out, unsigned count) {
    __shared__ float total;
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (unsigned b = 0; b < blocks; ++b) s += sums[b];
        total = s;
    }
    __syncthreads();
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) out[i] = expf(in[i]) / total;
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned needed = ((unsigned)N - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (scratch == nullptr) cudaMalloc(&scratch, MAX_BLOCKS * sizeof(float));
    sum_exp<<<blocks, BLOCK>>>(input, scratch, (unsigned)N);
    quotients<<<blocks, BLOCK>>>(input, scratch, blocks, output, (unsigned)N);
}
