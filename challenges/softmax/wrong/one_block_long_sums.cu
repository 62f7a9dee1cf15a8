// expect: WRONG_ANSWER
// expect-message: run long in one sequence
// graded-with: submit
// One block of 256 threads does everything: each thread walks the input with a stride of 256, keeping
// its own running maximum and then its own running sum of exp(x - max), and the block combines the 256
// partial values as a tree. Every step is right, and every functional and randomized case passes (up to
// a million elements each thread adds about 4,000 terms). At the timed sizes each thread adds 32,768
// terms (2^23) and 131,072 (2^25) one after another: the running sum grows until the small terms fall
// below its last place, and the sum that every output is divided by drifts by several times the FP32
// error the tolerance allows (statement.md, "Accuracy"). `grader run` does not check those sizes;
// `grader submit` does, on a GPU and in the emulator alike. Tree the per-thread sums, or use more
// threads: the loop, not the algorithm, is what is too long.
#include <cuda_runtime.h>
#include <math.h>

constexpr int THREADS = 256;

__device__ float block_combine(float* scratch, float value, bool take_max) {
    int t = threadIdx.x;
    scratch[t] = value;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (t < half) {
            float other = scratch[t + half];
            scratch[t] = take_max ? fmaxf(scratch[t], other) : scratch[t] + other;
        }
        __syncthreads();
    }
    float result = scratch[0];
    __syncthreads();  // every thread has read it before scratch is used again
    return result;
}

__global__ void softmax_one_block(const float* input, float* output, int n) {
    __shared__ float scratch[THREADS];
    float top = -INFINITY;
    for (int i = threadIdx.x; i < n; i += THREADS) top = fmaxf(top, input[i]);
    top = block_combine(scratch, top, true);

    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += THREADS) sum += expf(input[i] - top);
    sum = block_combine(scratch, sum, false);

    for (int i = threadIdx.x; i < n; i += THREADS) output[i] = expf(input[i] - top) / sum;
}

extern "C" void solve(const float* input, float* output, int N) {
    softmax_one_block<<<1, THREADS>>>(input, output, N);
}
