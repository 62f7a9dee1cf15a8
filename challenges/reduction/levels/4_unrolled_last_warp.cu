// expect: ACCEPTED
// Level 4 — the last six steps within one warp, with __syncwarp() instead of __syncthreads().
//
// Over level 3: once s <= 32 only the first warp has work, yet every step still ended with a barrier
// of the whole block and a loop test. Here the loop ends after s = 64 and warp 0 finishes alone: the
// steps for s = 32, 16, 8, 4, 2, 1 are written out, with no loop and no `if (tid < s)`: all 32 lanes
// add every step (the upper lanes compute sums nobody reads, which costs nothing more than a mask).
//
// Why __syncwarp(): the classic version of this code drops every barrier here and marks the shared
// array `volatile`, relying on the 32 lanes of a warp running in lockstep. Since Volta (sm_70) they do
// not have to: each lane has its own program counter and the warp may split, so lane 0 can read
// partial[16] before lane 16 has stored its sum there; `volatile` only stops the compiler from keeping
// values in registers, it does not order one lane after another. __syncwarp() does: it waits for the
// warp's lanes and makes their shared-memory writes visible to each other. Each step therefore reads
// its neighbour's value into a register, waits, writes its own, and waits again, so that no lane
// overwrites a value another lane has still to read. (Warp shuffles, level 6, need none of this.)
//
// The passes are unchanged: one partial sum per block into scratch, then the same kernel on the
// partial sums until one block writes output[0].
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;             // threads per block
constexpr unsigned PER_BLOCK = 2 * BLOCK;  // elements each block reduces

// Called by the 32 lanes of warp 0 once partial[0 .. 63] hold the block's last 64 sums; lane 0's
// result is the block's sum.
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

__global__ void reduce_last_warp(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * PER_BLOCK + tid;  // unsigned: near INT_MAX the last block passes it
    float sum = i < count ? in[i] : 0.0f;
    if (i + BLOCK < count) sum += in[i + BLOCK];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
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

static unsigned blocks_for(unsigned count) { return (count - 1) / PER_BLOCK + 1; }  // count >= 1

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
        reduce_last_warp<<<blocks, BLOCK>>>(in, out, count);
        if (blocks == 1) return;
        in = out;
        count = blocks;
    }
}
