// expect: WRONG_ANSWER
// expect-message: 257
// Level 1's first kernel alone: every block of 256 scans its own elements, and nothing adds the sums of
// the blocks before it. Element 300 comes out as x_256 + .. + x_300, the scan of its own block only.
// Up to N = 256 there is one block and the answer is right; from N = 257 on every block but the first
// is off by the sum of everything before it. A scan is not a collection of independent pieces: the
// blocks' totals must be scanned too (level 1: recursively; level 2: one block) and added back, or
// each tile must learn its offset from the tiles before it (level 3).
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void scan_blocks(const float* in, float* out, unsigned count) {
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
    // BUG: the block's total is not kept, so no later pass can add it to the blocks after this one.
}

extern "C" void solve(const float* input, float* output, int N) {
    unsigned blocks = ((unsigned)N - 1) / BLOCK + 1;
    scan_blocks<<<blocks, BLOCK>>>(input, output, (unsigned)N);
}
