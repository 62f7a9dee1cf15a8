// expect: WRONG_ANSWER
// expect-message: past its end
// expect-cuda: ACCEPTED
// One block of 1024 threads. Each thread reads its first element, in[threadIdx.x], before any check
// against N, and feeds it to the maximum; the sum and the quotients are guarded. Below N = 1024 the
// threads past the end read beyond the input. What they read decides nothing here only by luck:
// fmaxf drops a NaN, and the grader's buffers are surrounded by NaN, so on the grader's GPU the
// maximum comes out right and nothing shows (the expect-cuda line: the GPU grader cannot see a read).
// On another GPU setup the bytes past an allocation are whatever lies there, another buffer's data,
// and a larger value than every input makes the maximum wrong (exp underflows to 0, the sum to 0,
// the quotients NaN). The CPU emulator keeps the pages past each buffer shut to kernels and so sees
// the read itself: WRONG_ANSWER, naming the thread and how far past the end it read. (A third-party
// file written this way, graded with `submit` on an H100, failed for another reason: one block's sums
// are too long for FP32 at the 2^23 and 2^25 performance shapes, which `run` does not check.)
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 1024;

__global__ void softmax_one_block(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    float m = in[tid];  // BUG: no `tid < count` check
    for (unsigned i = tid + BLOCK; i < count; i += BLOCK) m = fmaxf(m, in[i]);
    partial[tid] = m;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = fmaxf(partial[tid], partial[tid + s]);
        __syncthreads();
    }
    float top = partial[0];
    __syncthreads();
    float sum = 0.0f;
    for (unsigned i = tid; i < count; i += BLOCK) sum += expf(in[i] - top);
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
