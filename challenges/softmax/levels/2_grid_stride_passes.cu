// expect: ACCEPTED
// Level 2 — one kernel per pass: grid-stride loops, sequential-addressing trees, three launches.
//
// Over level 1, three changes:
// - The grid is as large as the GPU holds at once (8 blocks of 256 threads on each multiprocessor,
//   the count asked once and kept), and each thread walks the input in steps of the whole grid's
//   width, keeping its running maximum or sum in a register: at N = 2^25 about 124 elements each,
//   where level 1 had one per thread and 131,072 blocks. Consecutive threads still read consecutive
//   elements (coalesced).
// - The tree uses sequential addressing: step s = 128, 64 .. 1 pairs element t with t + s for t < s,
//   so the threads that work are contiguous and whole warps drop out, instead of every warp running
//   with most lanes masked off; the modulo is gone.
// - Each pass is one kernel. The grid leaves one partial result per block in scratch (1,056 on an H100
//   or H200), and the next kernel starts with every block reducing those partials itself: each block
//   reads the same values in the same order, so each finds the same M (or S) to the bit. Three
//   launches in all: maximum; then M and the sum of exp(x - M); then M, S and the quotients. Level 1
//   needed 7 at 500,000 elements, each pass over the partials a launch of its own.
// The price: every block reads the 1,056 partials, about 4 MB of (cached) reads per pass in all.
// Level 4 has one block do it.
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;        // threads per block: a power of two from 64 to 1024
constexpr unsigned BLOCKS_PER_SM = 8;  // 8 × 256 = 2048 threads, a full H100/H200 multiprocessor

// Sequential-addressing tree over partial[0 .. BLOCK): the maximum (MAX) or the sum ends in partial[0].
// Every thread of the block must call it; the result is returned to all of them.
template <bool MAX>
__device__ float block_reduce(float* partial, float value) {
    unsigned tid = threadIdx.x;
    partial[tid] = value;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = MAX ? fmaxf(partial[tid], partial[tid + s]) : partial[tid] + partial[tid + s];
        __syncthreads();  // the next step reads what this one wrote
    }
    float result = partial[0];
    __syncthreads();  // every thread has read partial[0] before the array is used again
    return result;
}

// The maximum (MAX) or the sum of the grid's `blocks` partial results, the same in every block.
template <bool MAX>
__device__ float combine_partials(float* partial, const float* parts, unsigned blocks) {
    float value = MAX ? -INFINITY : 0.0f;
    for (unsigned i = threadIdx.x; i < blocks; i += BLOCK) value = MAX ? fmaxf(value, parts[i]) : value + parts[i];
    return block_reduce<MAX>(partial, value);
}

// Pass 1: each block's maximum of its grid-stride share into maxima[blockIdx.x].
__global__ void pass_max(const float* in, float* maxima, unsigned count) {
    __shared__ float partial[BLOCK];
    // Unsigned: i < count <= INT_MAX and the stride is under 2^21, so i + stride never wraps 32 bits.
    unsigned stride = gridDim.x * BLOCK;
    float m = -INFINITY;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) m = fmaxf(m, in[i]);
    m = block_reduce<true>(partial, m);
    if (threadIdx.x == 0) maxima[blockIdx.x] = m;
}

// Pass 2: M from the maxima, then each block's sum of exp(x - M) into sums[blockIdx.x].
__global__ void pass_sum(const float* in, const float* maxima, float* sums, unsigned count) {
    __shared__ float partial[BLOCK];
    float top = combine_partials<true>(partial, maxima, gridDim.x);
    unsigned stride = gridDim.x * BLOCK;
    float s = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) s += expf(in[i] - top);
    s = block_reduce<false>(partial, s);
    if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

// Pass 3: M and S from the partials, then every quotient.
__global__ void pass_quotients(const float* in, const float* maxima, const float* sums, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    float top = combine_partials<true>(partial, maxima, gridDim.x);
    float total = combine_partials<false>(partial, sums, gridDim.x);
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) out[i] = expf(in[i] - top) / total;
}

static unsigned full_grid() {
    static unsigned blocks = 0;  // 0: not asked yet; the GPU cannot change while the process runs
    if (blocks == 0) {
        int device = 0, multiprocessors = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
        blocks = (multiprocessors > 0 ? multiprocessors : 1) * BLOCKS_PER_SM;
    }
    return blocks;
}

// Partial maxima and sums, full_grid() of each: allocated by the first call, never freed (the process
// ends with them; freeing them in every call would cost a cudaMalloc, and cudaFree's device
// synchronization, in every call).
static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / BLOCK + 1;  // a small N fills fewer blocks than the GPU holds
    unsigned blocks = needed < full_grid() ? needed : full_grid();
    if (scratch == nullptr && cudaMalloc(&scratch, 2 * full_grid() * sizeof(float)) != cudaSuccess) {
        scratch = nullptr;
        return;  // out of memory: output stays unwritten, and the check says so
    }
    float* maxima = scratch;
    float* sums = scratch + full_grid();
    // All three with the same grid: pass 2 and 3 reduce exactly the `blocks` partials pass 1 wrote.
    pass_max<<<blocks, BLOCK>>>(input, maxima, count);
    pass_sum<<<blocks, BLOCK>>>(input, maxima, sums, count);
    pass_quotients<<<blocks, BLOCK>>>(input, maxima, sums, output, count);
}
