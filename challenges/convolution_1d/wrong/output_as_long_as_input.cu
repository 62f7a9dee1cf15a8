// expect: OUT_OF_BOUNDS
// One thread per input element instead of one per output: the grid covers input_size threads and the
// bounds check is `i < input_size`, as in an element-wise kernel. But a valid correlation has only
// input_size - kernel_size + 1 outputs (a window must lie inside the input), so the last
// kernel_size - 1 threads write past the end of output, and read past the end of input first.
// With kernel_size = 1 the two counts agree and the file passes; LeetGPU's 4/2 example already
// writes one element too many. The grader surrounds every buffer with guard words and reports the
// writes past the end, with how far they reach.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__global__ void correlate_too_many(const float* input, const float* kernel, float* output, int input_size,
                                   int kernel_size) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= input_size) return;  // BUG: the outputs end at input_size - kernel_size
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; ++j) sum += input[i + j] * kernel[j];
    output[i] = sum;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int blocks = (input_size + BLOCK - 1) / BLOCK;
    correlate_too_many<<<blocks, BLOCK>>>(input, kernel, output, input_size, kernel_size);
}
