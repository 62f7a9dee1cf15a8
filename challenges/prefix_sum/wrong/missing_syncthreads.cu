// expect: RACE
// expect-message: __syncthreads
// backends: emulator
// Level 1's Hillis-Steele scan without the __syncthreads() between its steps. Step d reads the values
// step d/2 wrote, two of them, one of which another thread wrote: without a barrier nothing says that
// thread has written it yet. The double buffer does not help, it only keeps a thread from overwriting
// a value another may still read in the same step. On a GPU the answer depends on how the warps happen
// to be scheduled (within one warp the lanes often stay together, which hides the bug in small
// blocks), so only the emulator promises a verdict: it runs every block's threads in forward and in
// reverse order. Forward, thread 0 runs all eight steps before thread 1 starts, and the threads after
// it read buffers already several steps on; reversed, each thread reads buffers not yet written
// (the poison shared memory starts with). Two different answers from one input: a race.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void scan_blocks(const float* in, float* out, float* block_sums, unsigned count) {
    __shared__ float buffer[2][BLOCK];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    buffer[0][tid] = i < count ? in[i] : 0.0f;
    __syncthreads();
    unsigned from = 0;
    for (unsigned step = 1; step < BLOCK; step *= 2) {
        float value = buffer[from][tid];
        if (tid >= step) value += buffer[from][tid - step];
        buffer[1 - from][tid] = value;
        from = 1 - from;
        // BUG: the __syncthreads() that belongs here is missing
    }
    __syncthreads();
    if (i < count) out[i] = buffer[from][tid];
    if (block_sums != nullptr && tid == BLOCK - 1) block_sums[blockIdx.x] = buffer[from][tid];
}

__global__ void add_offsets(float* out, const float* scanned_sums, unsigned count) {
    unsigned block = blockIdx.x + 1;
    unsigned i = block * BLOCK + threadIdx.x;
    if (i < count) out[i] += scanned_sums[block - 1];
}

static unsigned blocks_for(unsigned count) { return (count - 1) / BLOCK + 1; }

static float* scratch = nullptr;
static size_t scratch_floats = 0;

static void scan(const float* in, float* out, unsigned count, float* sums) {
    unsigned blocks = blocks_for(count);
    scan_blocks<<<blocks, BLOCK>>>(in, out, blocks > 1 ? sums : nullptr, count);
    if (blocks == 1) return;
    scan(sums, sums, blocks, sums + blocks);
    add_offsets<<<blocks - 1, BLOCK>>>(out, sums, count);
}

extern "C" void solve(const float* input, float* output, int N) {
    size_t floats = 0;
    for (unsigned blocks = blocks_for(N); blocks > 1; blocks = blocks_for(blocks)) floats += blocks;
    if (floats > scratch_floats) {
        cudaFree(scratch);
        cudaMalloc(&scratch, floats * sizeof(float));
        scratch_floats = floats;
    }
    scan(input, output, (unsigned)N, scratch);
}
