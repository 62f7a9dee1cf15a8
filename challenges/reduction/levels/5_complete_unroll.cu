// expect: ACCEPTED
// Level 5 — the block size a template parameter, and the whole tree unrolled.
//
// Over level 4: the loop over s that remained (s = 128, 64 for 256 threads) still spent a counter, a
// shift, a compare and a branch on every step. With the block size SIZE known at compile time, each
// step becomes `if (SIZE >= 2s && tid < s)`; the first test is decided by the compiler, so the steps a
// block of SIZE threads does not need disappear and the rest are straight-line code. The same kernel
// serves any power-of-two block size from 64 to 1024: solve names the size once, in BLOCK.
//
// The passes are unchanged: one partial sum per block into scratch, then the same kernel on the
// partial sums until one block writes output[0].
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;  // threads per block: a power of two from 64 to 1024

// The last six steps in warp 0, as in level 4: each step reads, waits for the warp, writes, waits.
__device__ float last_warp(float* partial, unsigned lane) {
    float sum = partial[lane] + partial[lane + 32];
    partial[lane] = sum;
    __syncwarp();
    sum += partial[lane + 16];
    __syncwarp();  // every lane has read before any lane writes
    partial[lane] = sum;
    __syncwarp();  // every lane has written before any lane reads
    sum += partial[lane + 8];
    __syncwarp();
    partial[lane] = sum;
    __syncwarp();
    sum += partial[lane + 4];
    __syncwarp();
    partial[lane] = sum;
    __syncwarp();
    sum += partial[lane + 2];
    __syncwarp();
    partial[lane] = sum;
    __syncwarp();
    return sum + partial[lane + 1];
}

template <unsigned SIZE>
__global__ void reduce_unrolled(const float* in, float* out, unsigned count) {
    static_assert(SIZE >= 64 && SIZE <= 1024 && (SIZE & (SIZE - 1)) == 0, "a power of two from 64 to 1024");
    __shared__ float partial[SIZE];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * (2 * SIZE) + tid;  // unsigned: near INT_MAX the last block passes it
    float sum = i < count ? in[i] : 0.0f;
    if (i + SIZE < count) sum += in[i + SIZE];
    partial[tid] = sum;
    __syncthreads();
    // Each `SIZE >= ..` is a constant: the compiler keeps a step only where the block needs it.
    if (SIZE >= 1024) {
        if (tid < 512) partial[tid] += partial[tid + 512];
        __syncthreads();
    }
    if (SIZE >= 512) {
        if (tid < 256) partial[tid] += partial[tid + 256];
        __syncthreads();
    }
    if (SIZE >= 256) {
        if (tid < 128) partial[tid] += partial[tid + 128];
        __syncthreads();
    }
    if (SIZE >= 128) {
        if (tid < 64) partial[tid] += partial[tid + 64];
        __syncthreads();
    }
    if (tid < 32) {
        sum = last_warp(partial, tid);
        if (tid == 0) out[blockIdx.x] = sum;
    }
}

// Partial sums between passes: allocated by the first call that needs them, grown when a larger N
// needs more, never freed (the process ends with the buffer; freeing it in every call would cost a
// cudaMalloc, and cudaFree's device synchronization, in every call).
static float* scratch = nullptr;
static size_t scratch_floats = 0;

static float* scratch_of(size_t floats) {
    if (floats > scratch_floats) {
        cudaFree(scratch);  // waits for kernels still reading the old buffer; nullptr is a no-op
        scratch = nullptr;
        scratch_floats = 0;
        if (cudaMalloc(&scratch, floats * sizeof(float)) != cudaSuccess) return nullptr;
        scratch_floats = floats;
    }
    return scratch;
}

static unsigned blocks_for(unsigned count) { return (count - 1) / (2 * BLOCK) + 1; }  // count >= 1

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned blocks = blocks_for(count);
    float* partials[2] = {nullptr, nullptr};
    if (blocks > 1) {
        // Two regions used in turn, pass k writing one while it reads the other: pass 1's sums, then
        // pass 2's; no later pass writes more sums than pass 1.
        unsigned second = blocks_for(blocks);
        float* base = scratch_of((size_t)blocks + second);
        if (base == nullptr) return;  // out of memory: output stays unwritten, and the check says so
        partials[0] = base;
        partials[1] = base + blocks;
    }
    const float* in = input;
    for (int pass = 0;; ++pass) {
        blocks = blocks_for(count);
        float* out = blocks == 1 ? output : partials[pass % 2];  // the last pass writes the answer
        reduce_unrolled<BLOCK><<<blocks, BLOCK>>>(in, out, count);
        if (blocks == 1) return;
        in = out;
        count = blocks;
    }
}
