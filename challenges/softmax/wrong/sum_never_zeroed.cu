// expect: WRONG_ANSWER
// expect-message: NaN
// expect-cuda: WRONG_ANSWER
// Each block adds its sum of exp(x - M) into one float in scratch with atomicAdd, and nothing sets that
// float to zero: not before the first call, and not between calls. On a GPU, memory fresh from
// cudaMalloc often happens to hold zeros, so the first call is right, and every later call adds its
// sum to all the earlier ones (the second case, N = 2, is divided by its own sum plus the first
// case's). The emulator fills fresh memory with garbage, NaN, as a GPU is entitled to, so there every
// case is NaN (on a GPU the message names the second case instead: hence `expect-cuda`, which checks
// the verdict only). The fix: cudaMemsetAsync(total, 0, sizeof(float)) before the kernel, every call.
// (Float atomics also make the sum depend on the order the blocks finish in: the ladder's levels
// combine their partial results in a fixed order instead.)
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

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

// One block finds M.
__global__ void find_max(const float* in, float* top, unsigned count) {
    __shared__ float partial[BLOCK];
    float m = -INFINITY;
    for (unsigned i = threadIdx.x; i < count; i += BLOCK) m = fmaxf(m, in[i]);
    m = block_reduce<true>(partial, m);
    if (threadIdx.x == 0) *top = m;
}

__global__ void add_exps(const float* in, const float* top, float* total, unsigned count) {
    __shared__ float partial[BLOCK];
    float m = *top, s = 0.0f;
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) s += expf(in[i] - m);
    s = block_reduce<false>(partial, s);
    if (threadIdx.x == 0) atomicAdd(total, s);  // BUG: *total was never set to zero
}

__global__ void quotients(const float* in, const float* top, const float* total, float* out, unsigned count) {
    float m = *top, s = *total;
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride) out[i] = expf(in[i] - m) / s;
}

static float* scratch = nullptr;  // [0]: M, [1]: the sum

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (scratch == nullptr) cudaMalloc(&scratch, 2 * sizeof(float));
    find_max<<<1, BLOCK>>>(input, scratch, count);
    add_exps<<<blocks, BLOCK>>>(input, scratch, scratch + 1, count);
    quotients<<<blocks, BLOCK>>>(input, scratch, scratch + 1, output, count);
}
