// expect: RACE
// expect-message: never resets
// expect-cuda: WRONG_ANSWER
// Block sums accumulated with atomicAdd into scratch memory that is zeroed once, when it is allocated,
// and never again. Pass 1 has every thread add its element into its block's sum (atomicAdd: many
// threads, one address), pass 2 scans the sums, pass 3 scans each block and adds the sums before it.
// The first call is right. The second finds the first call's sums still there and adds on top of them:
// every block's offset is now its predecessors' sums twice over (or this call's plus an earlier
// case's). Scratch memory keeps its contents from one call to the next; an accumulator in it must be
// zeroed in every call (cudaMemsetAsync before pass 1, in the same stream), or written with a plain
// store instead of added to. The emulator runs every case twice, so its second run of the first case
// with two blocks (N = 257) fails where the first run passed: RACE, naming state kept between calls.
// A GPU runs each case once: there the first case after the scratch stops growing fails.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void block_sums(const float* in, float* sums, unsigned count) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) atomicAdd(&sums[blockIdx.x], in[i]);  // adds to whatever sums[] held before
}

// One thread: sums[b] becomes the sum of blocks 0 .. b (a short loop: at most 3,907 sums here).
__global__ void scan_sums(float* sums, unsigned blocks) {
    for (unsigned b = 1; b < blocks; ++b) sums[b] += sums[b - 1];
}

__global__ void scan_blocks(const float* in, float* out, const float* scanned_sums, unsigned count) {
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
    float before = blockIdx.x > 0 ? scanned_sums[blockIdx.x - 1] : 0.0f;
    if (i < count) out[i] = before + buffer[from][tid];
}

static float* sums = nullptr;
static unsigned sums_size = 0;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N, blocks = (count - 1) / BLOCK + 1;
    if (blocks > sums_size) {
        cudaFree(sums);
        cudaMalloc(&sums, blocks * sizeof(float));
        cudaMemset(sums, 0, blocks * sizeof(float));  // BUG: zeroed here, once, not in every call
        sums_size = blocks;
    }
    block_sums<<<blocks, BLOCK>>>(input, sums, count);
    scan_sums<<<1, 1>>>(sums, blocks);
    scan_blocks<<<blocks, BLOCK>>>(input, output, sums, count);
}
