// expect: WRONG_ANSWER
// expect-message: differ from the reference
// GPU Gems 3's work-efficient scan (Blelloch's up-sweep and down-sweep, chapter 39), used as it is. That
// scan is exclusive: element i receives the sum of the elements before it, x_0 + .. + x_{i-1}, and 0
// for the first. The challenge asks for the inclusive scan, x_0 + .. + x_i, so every output lacks its
// own element: output[0] is 0 instead of input[0], and N = 1 already fails. The fix is one addition
// per element (out = exclusive + x, or a shift by one place); the block sums, which this file also
// scans exclusively and adds back as offsets, are right as they are: the offset of block b is the
// sum of the blocks before it, an exclusive scan.
#include <cuda_runtime.h>

constexpr unsigned THREADS = 256;
constexpr unsigned BLOCK = 2 * THREADS;  // elements per block: two per thread

__global__ void blelloch_blocks(const float* in, float* out, float* block_sums, unsigned count) {
    __shared__ float tree[BLOCK];
    unsigned tid = threadIdx.x, base = blockIdx.x * BLOCK;
    tree[tid] = base + tid < count ? in[base + tid] : 0.0f;
    tree[tid + THREADS] = base + tid + THREADS < count ? in[base + tid + THREADS] : 0.0f;
    unsigned stride = 1;
    for (unsigned active = THREADS; active > 0; active /= 2) {  // up-sweep: a tree of partial sums
        __syncthreads();
        if (tid < active) tree[stride * (2 * tid + 2) - 1] += tree[stride * (2 * tid + 1) - 1];
        stride *= 2;
    }
    if (tid == 0) {
        if (block_sums != nullptr) block_sums[blockIdx.x] = tree[BLOCK - 1];
        tree[BLOCK - 1] = 0.0f;
    }
    for (unsigned active = 1; active < BLOCK; active *= 2) {  // down-sweep: the exclusive scan
        stride /= 2;
        __syncthreads();
        if (tid < active) {
            unsigned left = stride * (2 * tid + 1) - 1, right = stride * (2 * tid + 2) - 1;
            float t = tree[left];
            tree[left] = tree[right];
            tree[right] += t;
        }
    }
    __syncthreads();
    // BUG: tree[] holds the exclusive scan; the inclusive one needs this block's input added to it.
    if (base + tid < count) out[base + tid] = tree[tid];
    if (base + tid + THREADS < count) out[base + tid + THREADS] = tree[tid + THREADS];
}

// Block b + 1 adds scanned[b + 1], the (exclusive) sum of the blocks before it.
__global__ void add_offsets(float* out, const float* scanned, unsigned count) {
    unsigned block = blockIdx.x + 1;
    unsigned i = block * BLOCK + threadIdx.x;
    if (i < count) out[i] += scanned[block];
    if (i + THREADS < count) out[i + THREADS] += scanned[block];
}

static unsigned blocks_for(unsigned count) { return (count - 1) / BLOCK + 1; }

static float* scratch = nullptr;
static size_t scratch_floats = 0;

static void scan(const float* in, float* out, unsigned count, float* sums) {
    unsigned blocks = blocks_for(count);
    blelloch_blocks<<<blocks, THREADS>>>(in, out, blocks > 1 ? sums : nullptr, count);
    if (blocks == 1) return;
    scan(sums, sums, blocks, sums + blocks);
    add_offsets<<<blocks - 1, THREADS>>>(out, sums, count);
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
