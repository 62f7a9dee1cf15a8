// expect: WRONG_ANSWER
// expect-message: never written
// Four elements per thread read as one float4, and only whole float4s: the kernel covers 4 · (N / 4)
// elements and the last N % 4 are never read nor written. Their outputs keep the NaN the grader fills
// them with (LeetGPU's output buffer may happen to hold something else). N = 1, 2 and 3 have no whole
// float4 at all. A vectorised kernel needs a scalar tail: level 3 loads a partial tile element by
// element, with a bounds check on each, and uses float4 only for whole tiles.
#include <cuda_runtime.h>

constexpr unsigned THREADS = 256;  // a float4 each: 1,024 elements per block

// Block b scans float4s b·256 .. b·256 + 255 of in (those below quads = N / 4) and writes its total.
__global__ void scan_quads(const float* in, float* out, float* block_sums, unsigned quads) {
    __shared__ float buffer[2][THREADS];
    unsigned tid = threadIdx.x, q = blockIdx.x * THREADS + tid;
    float4 v = q < quads ? reinterpret_cast<const float4*>(in)[q] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    v.y += v.x;
    v.z += v.y;
    v.w += v.z;
    buffer[0][tid] = v.w;
    __syncthreads();
    unsigned from = 0;
    for (unsigned step = 1; step < THREADS; step *= 2) {
        float value = buffer[from][tid];
        if (tid >= step) value += buffer[from][tid - step];
        buffer[1 - from][tid] = value;
        from = 1 - from;
        __syncthreads();
    }
    float before = tid > 0 ? buffer[from][tid - 1] : 0.0f;
    if (q < quads)  // BUG: elements 4 · quads .. N - 1 belong to no float4, and no thread writes them
        reinterpret_cast<float4*>(out)[q] = make_float4(before + v.x, before + v.y, before + v.z, before + v.w);
    if (block_sums != nullptr && tid == THREADS - 1) block_sums[blockIdx.x] = buffer[from][tid];
}

// One thread: sums[b] becomes the sum of blocks 0 .. b.
__global__ void scan_sums(float* sums, unsigned blocks) {
    for (unsigned b = 1; b < blocks; ++b) sums[b] += sums[b - 1];
}

__global__ void add_offsets(float* out, const float* scanned_sums, unsigned quads) {
    unsigned block = blockIdx.x + 1;
    unsigned q = block * THREADS + threadIdx.x;
    if (q < quads) {
        float4* out4 = reinterpret_cast<float4*>(out);
        float4 v = out4[q];
        float before = scanned_sums[block - 1];
        out4[q] = make_float4(v.x + before, v.y + before, v.z + before, v.w + before);
    }
}

static float* sums = nullptr;
static unsigned sums_size = 0;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned quads = (unsigned)N / 4;
    unsigned blocks = quads > 0 ? (quads - 1) / THREADS + 1 : 1;
    if (blocks > sums_size) {
        cudaFree(sums);
        cudaMalloc(&sums, blocks * sizeof(float));
        sums_size = blocks;
    }
    scan_quads<<<blocks, THREADS>>>(input, output, blocks > 1 ? sums : nullptr, quads);
    if (blocks == 1) return;
    scan_sums<<<1, 1>>>(sums, blocks);
    add_offsets<<<blocks - 1, THREADS>>>(output, sums, quads);
}
