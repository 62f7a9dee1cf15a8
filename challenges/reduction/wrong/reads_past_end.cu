// expect: WRONG_ANSWER
// expect-message: NaN
// Each block sums 512 elements, two per thread, with no bounds check: the grid is rounded up to whole
// blocks, so unless N is a multiple of 512 the last block's threads read past the end of the input
// and add whatever lies there. A read changes nothing in memory, so the grader cannot catch it the
// way it catches a stray write (that is OUT_OF_BOUNDS); what it sees is the sum. The grader's buffers
// are surrounded by NaN, so the sum is NaN from N = 1 on. On a real GPU the bytes past an allocation
// are anything: another buffer's data, a small wrong sum, or a crash.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned PER_BLOCK = 2 * BLOCK;

__global__ void reduce_unchecked(const float* in, float* out) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * PER_BLOCK + tid;
    partial[tid] = in[i] + in[i + BLOCK];  // BUG: no `i < count` check
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

__global__ void reduce_checked(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned i = tid; i < count; i += BLOCK) sum += in[i];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[0] = partial[0];
}

static float* scratch = nullptr;
static size_t scratch_floats = 0;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned blocks = ((unsigned)N - 1) / PER_BLOCK + 1;
    if (blocks > scratch_floats) {
        cudaFree(scratch);
        cudaMalloc(&scratch, blocks * sizeof(float));
        scratch_floats = blocks;
    }
    reduce_unchecked<<<blocks, BLOCK>>>(input, scratch);
    reduce_checked<<<1, BLOCK>>>(scratch, output, blocks);  // the partial sums, with the check
}
