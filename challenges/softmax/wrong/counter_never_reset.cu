// expect: WRONG_ANSWER
// expect-message: functional case 2:
// Level 4's way of combining the blocks' pairs once, with its counter never set back. Each block
// writes its (maximum, sum) pair and counts itself done on a device counter; the block that counts
// last combines every pair and writes M and S for the quotient pass. The counter starts at 0 and
// nothing resets it: the last block of the first call sees gridDim.x - 1 and does its job, and in
// every later call the count starts past that, no block sees it, and the quotient pass divides by the
// M and S the first call left behind. The first call is right, and so is a second call on the same
// values (the emulator runs every case twice); the second case, N = 2, gets the first case's
// statistics. The fix is one line: the last block sets the counter back to 0 after using it.
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

__device__ void combine(float& m, float& s, float m2, float s2) {
    if (m2 > m) {
        s = s * expf(m - m2) + s2;
        m = m2;
    } else if (m2 != -INFINITY) {
        s += s2 * expf(m2 - m);
    }
}

__device__ void block_combine(float* ms, float* ss, float& m, float& s) {
    unsigned tid = threadIdx.x;
    ms[tid] = m;
    ss[tid] = s;
    __syncthreads();
    for (unsigned step = BLOCK / 2; step > 0; step >>= 1) {
        if (tid < step) combine(ms[tid], ss[tid], ms[tid + step], ss[tid + step]);
        __syncthreads();
    }
    m = ms[0];
    s = ss[0];
    __syncthreads();
}

__device__ unsigned blocks_done = 0;

__global__ void pass_stats(const float* in, float* maxima, float* sums, float* stats, unsigned count) {
    __shared__ float ms[BLOCK], ss[BLOCK];
    __shared__ bool last;
    unsigned stride = gridDim.x * BLOCK;
    float m = -INFINITY, s = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) combine(m, s, in[i], 1.0f);
    block_combine(ms, ss, m, s);
    if (threadIdx.x == 0) {
        maxima[blockIdx.x] = m;
        sums[blockIdx.x] = s;
        __threadfence();
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;  // true in the first call only
    }
    __syncthreads();
    if (!last) return;
    m = -INFINITY;
    s = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) combine(m, s, __ldcg(maxima + b), __ldcg(sums + b));
    block_combine(ms, ss, m, s);
    if (threadIdx.x == 0) {
        stats[0] = m;
        stats[1] = s;
        // BUG: `blocks_done = 0;` is missing
    }
}

__global__ void pass_quotients(const float* in, float* out, const float* stats, unsigned count) {
    float top = stats[0], total = stats[1];
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) out[i] = expf(in[i] - top) / total;
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (scratch == nullptr) cudaMalloc(&scratch, (2 * MAX_BLOCKS + 2) * sizeof(float));
    float* stats = scratch + 2 * MAX_BLOCKS;
    pass_stats<<<blocks, BLOCK>>>(input, scratch, scratch + MAX_BLOCKS, stats, count);
    pass_quotients<<<blocks, BLOCK>>>(input, output, stats, count);
}
