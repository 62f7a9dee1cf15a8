// expect: WRONG_ANSWER
// expect-message: never written
// One output short: outputs = input_size - kernel_size, forgetting the + 1. A window of K taps fits at
// positions 0 .. N - K, which is N - K + 1 of them (LeetGPU's example: 5 inputs, 3 taps, 3 outputs).
// The last output is never written and keeps the NaN the grader fills it with. Where the kernel is as
// long as the input there is one output and no thread at all: the file launches nothing then (an empty
// grid would be a launch error, a different lesson), and that output stays NaN too.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__global__ void correlate_short(const float* input, const float* kernel, float* output, int outputs,
                                int kernel_size) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= outputs) return;
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; ++j) sum += input[i + j] * kernel[j];
    output[i] = sum;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int outputs = input_size - kernel_size;  // BUG: one short; the count is input_size - kernel_size + 1
    if (outputs == 0) return;
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    correlate_short<<<blocks, BLOCK>>>(input, kernel, output, outputs, kernel_size);
}
