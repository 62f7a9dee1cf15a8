// expect: RACE
// expect-message: shared memory
// backends: emulator
// Hillis-Steele in a single shared array, a barrier after every step: in step d thread t does
// `scan[t] += scan[t - d]`. The barrier is there, and the race is inside the step: thread t - d may
// already have done its own step-d addition when thread t reads scan[t - d], and then thread t takes
// in d elements (t - 3d + 1 .. t - 2d) that the next step adds again; or it may not have, depending
// on which of the two ran first. The barriers order the steps, not the threads within one. Level 1
// writes each step into a second buffer (double buffering); a single array also works when each step
// reads first, waits at a barrier, then writes:
// `float left = scan[t - d]; __syncthreads(); scan[t] += left; __syncthreads();`.
// The emulator runs every block's threads in forward and in reverse order: forward, thread t - d has
// always updated scan[t - d] first (wrong); reversed, never (right). Two answers from one input: a
// race. On a GPU the outcome depends on the schedule, so only the emulator promises a verdict.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void scan_blocks(const float* in, float* out, float* block_sums, unsigned count) {
    __shared__ float scan[BLOCK];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    scan[tid] = i < count ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned step = 1; step < BLOCK; step *= 2) {
        if (tid >= step) scan[tid] += scan[tid - step];  // BUG: scan[tid - step] may already be this step's
        __syncthreads();
    }
    if (i < count) out[i] = scan[tid];
    if (block_sums != nullptr && tid == BLOCK - 1) block_sums[blockIdx.x] = scan[tid];
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
