// expect: WRONG_ANSWER
// expect-message: NaN
// One block of 1024 threads does everything: each thread starts its running maximum and sum from its
// first element, in[threadIdx.x], read before any check against N, then loops over the rest
// (threadIdx.x + 1024, + 2048, ...). Written and tested on inputs of a few thousand elements, where
// every thread has a first element; below N = 1024 the threads past the end read beyond the input.
// A read changes nothing in memory, so the grader cannot catch it the way it catches a stray write
// (that is OUT_OF_BOUNDS); what it sees is the result. Its buffers are surrounded by NaN, so the sum
// is NaN, and so is every output, from N = 1 on. On a real GPU the bytes past an allocation are
// anything: another buffer's data, a wrong answer that looks plausible, or a crash.
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 1024;

__global__ void softmax_one_block(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    float first = in[tid];  // BUG: no `tid < count` check
    float m = first;
    for (unsigned i = tid + BLOCK; i < count; i += BLOCK) m = fmaxf(m, in[i]);
    partial[tid] = m;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = fmaxf(partial[tid], partial[tid + s]);
        __syncthreads();
    }
    float top = partial[0];
    __syncthreads();
    float sum = expf(first - top);
    for (unsigned i = tid + BLOCK; i < count; i += BLOCK) sum += expf(in[i] - top);
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    float total = partial[0];
    for (unsigned i = tid; i < count; i += BLOCK) out[i] = expf(in[i] - top) / total;
}

extern "C" void solve(const float* input, float* output, int N) {
    softmax_one_block<<<1, BLOCK>>>(input, output, (unsigned)N);
}
