// expect: WRONG_ANSWER
// expect-message: reduced-precision
// Level 1 with its shared buffers and additions in half precision (__hadd), to halve the shared memory
// and use the FP16 units. Half keeps 11 significant bits where float keeps 24: every input loses 13
// bits as it is converted, and every addition rounds to 11 bits again, so already at N = 1 the output
// is off by up to 2^-12 of the input, 24 times the tolerance (statement.md, "Accuracy"). Partial
// sums of a scan grow (here to several thousand), and at 4,096 half precision's step between neighbours
// is already 4: larger inputs would overflow its 65,504 altogether. Storing the block sums and adding
// the offsets in float does not help: they were rounded to half when they were made.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void scan_blocks(const float* in, float* out, float* block_sums, unsigned count) {
    __shared__ __half buffer[2][BLOCK];
    unsigned tid = threadIdx.x, i = blockIdx.x * BLOCK + tid;
    buffer[0][tid] = __float2half(i < count ? in[i] : 0.0f);  // BUG: 11 significant bits from here on
    __syncthreads();
    unsigned from = 0;
    for (unsigned step = 1; step < BLOCK; step *= 2) {
        __half value = buffer[from][tid];
        if (tid >= step) value = __hadd(value, buffer[from][tid - step]);
        buffer[1 - from][tid] = value;
        from = 1 - from;
        __syncthreads();
    }
    if (i < count) out[i] = __half2float(buffer[from][tid]);
    if (block_sums != nullptr && tid == BLOCK - 1) block_sums[blockIdx.x] = __half2float(buffer[from][tid]);
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
