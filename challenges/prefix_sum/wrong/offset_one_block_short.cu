// expect: WRONG_ANSWER
// expect-message: 257
// Two conventions mixed up. One thread scans the block sums exclusively: offset[b] = the sum of blocks
// 0 .. b - 1, exactly what block b must add. The last kernel then reads offset[b - 1], as it would
// from an inclusive scan of the sums. Block b adds the blocks before b - 1 and misses block b - 1
// itself: block 1 adds nothing, block 2 only block 0, and so on, each output short by one block's sum.
// Up to N = 256 there is one block and no offset to get wrong; from N = 257 on the answer is wrong.
// An off-by-one between exclusive and inclusive is the commonest scan bug; naming the arrays after
// what they hold (`sums_before`, `sums_through`) makes it visible.
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
        __syncthreads();
    }
    if (i < count) out[i] = buffer[from][tid];
    if (tid == BLOCK - 1) block_sums[blockIdx.x] = buffer[from][tid];
}

// One thread: sums[b] becomes the sum of blocks 0 .. b - 1 (exclusive), sums[0] = 0.
__global__ void scan_sums_exclusive(float* sums, unsigned blocks) {
    float running = 0.0f;
    for (unsigned b = 0; b < blocks; ++b) {
        float own = sums[b];
        sums[b] = running;
        running += own;
    }
}

__global__ void add_offsets(float* out, const float* offsets, unsigned count) {
    unsigned block = blockIdx.x + 1;
    unsigned i = block * BLOCK + threadIdx.x;
    if (i < count) out[i] += offsets[block - 1];  // BUG: offsets[block] is this block's (exclusive scan)
}

static float* sums = nullptr;
static unsigned sums_size = 0;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N, blocks = (count - 1) / BLOCK + 1;
    if (blocks > sums_size) {
        cudaFree(sums);
        cudaMalloc(&sums, blocks * sizeof(float));
        sums_size = blocks;
    }
    scan_blocks<<<blocks, BLOCK>>>(input, output, sums, count);
    if (blocks == 1) return;
    scan_sums_exclusive<<<1, 1>>>(sums, blocks);
    add_offsets<<<blocks - 1, BLOCK>>>(output, sums, count);
}
