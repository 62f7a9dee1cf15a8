// expect: ACCEPTED
// A softmax in the style of many LeetGPU answers: the maximum through a float atomicMax the file
// defines itself, with atomicCAS on the value's bits (__float_as_int), since CUDA has atomicMax for
// integers only. nvcc compiles it, so the emulator must too (issue 19: an emulator that declared its
// own atomicMax(float*, float) called this file a redefinition, UNSUPPORTED).
//
// The maximum does not depend on the order the blocks' atomics land in, so every call returns the same
// bits; the sum does, so it is not an atomic: each block writes its partial sum, and one block adds
// them in a fixed order.
#include <cuda_runtime.h>
#include <math.h>

constexpr int BLOCK = 256;        // threads per block, a power of two
constexpr int MAX_BLOCKS = 1024;  // grid-stride beyond this: the partial sums fit one block's loop

__device__ float atomicMax(float* address, float val) {
    int* address_as_int = (int*)address;
    int old = *address_as_int, assumed;
    do {
        assumed = old;
        old = atomicCAS(address_as_int, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
    } while (assumed != old);
    return __int_as_float(old);
}

// Sequential-addressing tree over one block: the maximum (MAX) or the sum, returned to thread 0.
template <bool MAX>
__device__ float block_reduce(float* partial, float value) {
    partial[threadIdx.x] = value;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float other = partial[threadIdx.x + s];
            partial[threadIdx.x] = MAX ? fmaxf(partial[threadIdx.x], other) : partial[threadIdx.x] + other;
        }
        __syncthreads();
    }
    return partial[0];
}

__global__ void reset(float* top) { *top = -INFINITY; }

__global__ void find_max(const float* input, float* top, int N) {
    __shared__ float partial[BLOCK];
    float m = -INFINITY;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < N; i += gridDim.x * BLOCK) m = fmaxf(m, input[i]);
    m = block_reduce<true>(partial, m);
    if (threadIdx.x == 0) atomicMax(top, m);
}

__global__ void partial_sums(const float* input, const float* top, float* sums, int N) {
    __shared__ float partial[BLOCK];
    float s = 0.0f;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < N; i += gridDim.x * BLOCK) s += expf(input[i] - *top);
    s = block_reduce<false>(partial, s);
    if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

__global__ void total_sum(const float* sums, float* total, int blocks) {
    __shared__ float partial[BLOCK];
    float s = 0.0f;
    for (int b = threadIdx.x; b < blocks; b += BLOCK) s += sums[b];
    s = block_reduce<false>(partial, s);
    if (threadIdx.x == 0) *total = s;
}

__global__ void quotients(const float* input, float* output, const float* top, const float* total, int N) {
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < N; i += gridDim.x * BLOCK)
        output[i] = expf(input[i] - *top) / *total;
}

// Scratch: the maximum, the total and one partial sum per block, allocated once and kept.
static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    if (scratch == nullptr && cudaMalloc(&scratch, (2 + MAX_BLOCKS) * sizeof(float)) != cudaSuccess) return;
    float *top = scratch, *total = scratch + 1, *sums = scratch + 2;
    int blocks = (N + BLOCK - 1) / BLOCK;
    if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    reset<<<1, 1>>>(top);
    find_max<<<blocks, BLOCK>>>(input, top, N);
    partial_sums<<<blocks, BLOCK>>>(input, top, sums, N);
    total_sum<<<1, BLOCK>>>(sums, total, blocks);
    quotients<<<blocks, BLOCK>>>(input, output, top, total, N);
}
