// expect: RUNTIME_ERROR
// A tree reduction with its partial sums in dynamic shared memory (extern __shared__), launched with
// BLOCK bytes of it where it needs BLOCK floats: sizeof(float) forgotten in the third <<<...>>>
// argument. Each block asks for 256 bytes and writes 1 KiB, 768 bytes past the end of what it has. On
// a GPU the block's shared memory ends there: the writes are out of range, an illegal address that
// ends the launch (or, were another block's memory next, its data). The CPU emulator bounds each
// block's dynamic shared memory by the launch's request, to the 16 bytes of a float4, and names it.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void block_sums(const float* in, float* out, unsigned count) {
    extern __shared__ float partial[];
    unsigned tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + tid; i < count; i += gridDim.x * BLOCK) sum += in[i];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

static float* scratch = nullptr;
constexpr unsigned BLOCKS = 64;

extern "C" void solve(const float* input, float* output, int N) {
    if (!scratch) cudaMalloc(&scratch, BLOCKS * sizeof(float));
    block_sums<<<BLOCKS, BLOCK, BLOCK>>>(input, scratch, (unsigned)N);  // BUG: BLOCK * sizeof(float)
    block_sums<<<1, BLOCK, BLOCK>>>(scratch, output, BLOCKS);
}
