// expect: WRONG_ANSWER
// expect-message: 65536
// One block of 1024 threads, each adding a fixed 16 elements (tid, tid + 1024, ..., tid + 15·1024)
// before the tree: right for every N up to 16,384, written and tested on small inputs. Past that the
// rest of the array is never read: the first case above, N = 65,536, sums a quarter of it. (A loop
// `for (i = tid; i < N; i += 1024)` would be right for every N, and slow: one block uses one of the
// GPU's 132 multiprocessors.)
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 1024;
constexpr unsigned PER_THREAD = 16;

__global__ void reduce_one_block(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x;
    float sum = 0.0f;
    for (unsigned k = 0; k < PER_THREAD; ++k) {  // BUG: covers only the first BLOCK · PER_THREAD elements
        unsigned i = tid + k * BLOCK;
        if (i < count) sum += in[i];
    }
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) out[0] = partial[0];
}

extern "C" void solve(const float* input, float* output, int N) {
    reduce_one_block<<<1, BLOCK>>>(input, output, (unsigned)N);
}
