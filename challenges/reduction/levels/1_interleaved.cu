// expect: ACCEPTED
// Level 1 — a tree in shared memory per block, interleaved addressing, pass after pass.
//
// Each block of 256 threads loads 256 elements (zeros past the end) into shared memory and adds them
// up as a tree: in step s = 1, 2, 4 .. 128 the threads whose index is a multiple of 2s add the value
// s places to their right, so after eight steps element 0 holds the block's sum. A barrier separates
// the steps, because each reads what other threads wrote in the one before. Thread 0 writes the
// block's sum to a scratch array, and the same kernel then reduces those partial sums, 256 to one,
// until a single block is left, which writes output[0]. Every pass adds in the same order, so the
// result is the same bit for bit in every call, which atomicAdd of block sums would not give.
//
// The tree is correct but slow: `tid % (2 * s) == 0` leaves most lanes of every warp idle (in the
// last steps, one thread in a block works), the warps stay divergent, and % is a costly instruction.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;  // threads per block, and elements each block reduces

__global__ void reduce_interleaved(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    // Unsigned: the last block's threads reach count - 1 + 255, past INT_MAX when N is near it.
    unsigned i = blockIdx.x * BLOCK + tid;
    partial[tid] = i < count ? in[i] : 0.0f;  // a zero adds nothing: the tree needs no bounds checks
    __syncthreads();
    for (unsigned s = 1; s < BLOCK; s *= 2) {
        if (tid % (2 * s) == 0) partial[tid] += partial[tid + s];
        __syncthreads();  // the next step reads sums this one wrote
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

// Partial sums between passes. Allocated by the first call that needs them and grown when a larger
// N needs more, never freed: the process ends with the buffer, and freeing it in every call would
// cost a cudaMalloc (and the device synchronization of cudaFree) in every call.
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

static unsigned blocks_for(unsigned count) { return (count - 1) / BLOCK + 1; }  // count >= 1

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned blocks = blocks_for(count);
    float* partials[2] = {nullptr, nullptr};
    if (blocks > 1) {
        // Two regions used in turn: pass k reads one and writes the other. The first holds pass 1's
        // sums; the second, pass 2's, and every later pass writes fewer sums than pass 1 did.
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
        reduce_interleaved<<<blocks, BLOCK>>>(in, out, count);
        if (blocks == 1) return;
        in = out;
        count = blocks;
    }
}
