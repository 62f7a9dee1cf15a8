// expect: WRONG_ANSWER
// expect-message: reduced-precision
// The exponentials in half precision, to use the GPU's FP16 units (hexp on a GPU; spelled here as its
// two conversions, which give the same values): x - max is rounded to half, its exp computed and
// rounded to half again. Half keeps 11 significant bits where float keeps 24, so every output is off
// by up to 2^-12 of itself, and half's range ends at 6·10^-8: exp(x - max) below that is 0 or a
// coarse subnormal, wrong by up to all of itself. LeetGPU's own inputs reach e^-20 = 2·10^-9.
// The worst element of a case is thousands of times the allowed error (statement.md, "Accuracy").
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

__device__ float half_exp(float x) {
    __half h = __float2half(x);                            // BUG: 11 significant bits
    return __half2float(__float2half(expf(__half2float(h))));  // BUG: and a result in half's range
}

template <bool MAX>
__device__ float block_reduce(float* partial, float value) {
    unsigned tid = threadIdx.x;
    partial[tid] = value;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = MAX ? fmaxf(partial[tid], partial[tid + s]) : partial[tid] + partial[tid + s];
        __syncthreads();
    }
    float result = partial[0];
    __syncthreads();
    return result;
}

__global__ void pass_max(const float* in, float* maxima, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned stride = gridDim.x * BLOCK;
    float m = -INFINITY;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) m = fmaxf(m, in[i]);
    m = block_reduce<true>(partial, m);
    if (threadIdx.x == 0) maxima[blockIdx.x] = m;
}

// One block: M from the maxima, then the sum of the half exps.
__global__ void pass_sum(const float* in, const float* maxima, unsigned blocks, float* stats, unsigned count) {
    __shared__ float partial[BLOCK];
    float m = -INFINITY;
    for (unsigned b = threadIdx.x; b < blocks; b += BLOCK) m = fmaxf(m, maxima[b]);
    float top = block_reduce<true>(partial, m);
    float s = 0.0f;
    for (unsigned i = threadIdx.x; i < count; i += BLOCK) s += half_exp(in[i] - top);
    s = block_reduce<false>(partial, s);
    if (threadIdx.x == 0) {
        stats[0] = top;
        stats[1] = s;
    }
}

__global__ void pass_quotients(const float* in, const float* stats, float* out, unsigned count) {
    float top = stats[0], total = stats[1];
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) out[i] = half_exp(in[i] - top) / total;
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (scratch == nullptr) cudaMalloc(&scratch, (MAX_BLOCKS + 2) * sizeof(float));
    pass_max<<<blocks, BLOCK>>>(input, scratch, count);
    pass_sum<<<1, BLOCK>>>(input, scratch, blocks, scratch + MAX_BLOCKS, count);
    pass_quotients<<<blocks, BLOCK>>>(input, scratch + MAX_BLOCKS, output, count);
}
