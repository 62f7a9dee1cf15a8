// expect: WRONG_ANSWER
// expect-message: differ from the reference
// Each block finds the maximum and the sum of exp(x - max) of its own share of the input (a
// grid-stride loop) and divides that share by them: a softmax per block, not of the vector. Right
// while one block holds everything (up to N = 256); from N = 257 on each block's outputs add up to 1
// on their own, and the whole output to the number of blocks. The blocks' partial results have to be
// combined across the grid (in scratch memory, then a second kernel or a last block) before any block
// can divide.
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

template <bool MAX>
__device__ float block_reduce(float* partial, float value) {
    unsigned tid = threadIdx.x;
    partial[tid] = value;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = MAX ? fmaxf(partial[tid], partial[tid + s]) : partial[tid] + partial[tid + s];
        __syncthreads();
    }
    float result = partial[0];
    __syncthreads();
    return result;
}

__global__ void softmax_per_block(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned first = blockIdx.x * BLOCK + threadIdx.x, stride = gridDim.x * BLOCK;
    float m = -INFINITY;
    for (unsigned i = first; i < count; i += stride) m = fmaxf(m, in[i]);
    float top = block_reduce<true>(partial, m);  // BUG: this block's maximum
    float s = 0.0f;
    for (unsigned i = first; i < count; i += stride) s += expf(in[i] - top);
    float total = block_reduce<false>(partial, s);  // BUG: and this block's sum
    for (unsigned i = first; i < count; i += stride) out[i] = expf(in[i] - top) / total;
}

extern "C" void solve(const float* input, float* output, int N) {
    unsigned needed = ((unsigned)N - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    softmax_per_block<<<blocks, BLOCK>>>(input, output, (unsigned)N);
}
