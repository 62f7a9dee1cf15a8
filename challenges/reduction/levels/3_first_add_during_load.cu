// expect: ACCEPTED
// Level 3 — the first addition during the load: each thread reads two elements.
//
// Over level 2: in level 2 half the threads went idle at the very first step of the tree, right after
// loading. Here each block covers 512 elements: thread t reads element t and element t + 256 of its
// block's range and stores their sum, so the tree starts on 256 sums instead of 256 elements. Half as
// many blocks (and block start-ups, and tree steps per element) for the same data, and each thread
// has two loads in flight instead of one.
//
// The passes are unchanged: one partial sum per block into scratch, then the same kernel on the
// partial sums until one block writes output[0].
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;             // threads per block
constexpr unsigned PER_BLOCK = 2 * BLOCK;  // elements each block reduces

__global__ void reduce_two_loads(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    // Unsigned: blocks * 512 may pass INT_MAX when N is near it, never 2^32.
    unsigned i = blockIdx.x * PER_BLOCK + tid;
    float sum = i < count ? in[i] : 0.0f;
    if (i + BLOCK < count) sum += in[i + BLOCK];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();  // the next step reads sums this one wrote
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
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
        reduce_two_loads<<<blocks, BLOCK>>>(in, out, count);
        if (blocks == 1) return;
        in = out;
        count = blocks;
    }
}
