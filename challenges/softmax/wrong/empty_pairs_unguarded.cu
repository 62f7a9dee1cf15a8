// expect: WRONG_ANSWER
// expect-message: NaN
// Level 3's online softmax with a shorter pair combine: m = max(m1, m2), s = s1 · exp(m1 - m) +
// s2 · exp(m2 - m), without the guard for empty pairs. A thread that saw no element holds
// (-infinity, 0); combining two of them computes exp(-infinity - (-infinity)) = exp(NaN) = NaN, and
// 0 · NaN is NaN. The NaN then spreads through the tree to M and S, and to every output. Here every
// call fails: the second kernel combines one pair per block with 256 threads, and with fewer blocks
// than that (at most 64 here) its threads past the last block hold empty pairs. (A kernel with more
// pairs than threads would still fail wherever N leaves two threads of a tree step empty: N = 1 first.)
// The fix is level 3's: skip a pair whose maximum is -infinity.
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

__device__ void combine(float& m, float& s, float m2, float s2) {
    float top = fmaxf(m, m2);
    s = s * expf(m - top) + s2 * expf(m2 - top);  // BUG: NaN when m = m2 = -infinity
    m = top;
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

__global__ void pass_stats(const float* in, float* maxima, float* sums, unsigned count) {
    __shared__ float ms[BLOCK], ss[BLOCK];
    unsigned stride = gridDim.x * BLOCK;
    float m = -INFINITY, s = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) {
        float x = in[i];
        if (x > m) {
            s = s * expf(m - x) + 1.0f;
            m = x;
        } else {
            s += expf(x - m);
        }
    }
    block_combine(ms, ss, m, s);
    if (threadIdx.x == 0) {
        maxima[blockIdx.x] = m;
        sums[blockIdx.x] = s;
    }
}

__global__ void pass_quotients(const float* in, const float* maxima, const float* sums, float* out, unsigned count) {
    __shared__ float ms[BLOCK], ss[BLOCK];
    float m = -INFINITY, s = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) combine(m, s, maxima[b], sums[b]);
    block_combine(ms, ss, m, s);
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) out[i] = expf(in[i] - m) / s;
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (scratch == nullptr) cudaMalloc(&scratch, 2 * MAX_BLOCKS * sizeof(float));
    pass_stats<<<blocks, BLOCK>>>(input, scratch, scratch + MAX_BLOCKS, count);
    pass_quotients<<<blocks, BLOCK>>>(input, scratch, scratch + MAX_BLOCKS, output, count);
}
