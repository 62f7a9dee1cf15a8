// expect: WRONG_ANSWER
// expect-message: reduced-precision
// The sum kept in half precision, to use the GPU's FP16 arithmetic (__hfma: half inputs, a half
// accumulator). Half keeps 11 significant bits where float keeps 24: each input and tap is rounded to
// within 2^-12 of itself, and every addition rounds the running sum to 2^-12 of its size. A sum of 2,047
// terms that cancels (the values are zero-mean) is left with errors of a few 2^-12 of its terms' sizes,
// thousands of times the 2^-24 that FP32 makes and the tolerance allows (statement.md, "Accuracy").
// Close everywhere, right nowhere: the grader's diagnosis is reduced precision.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__global__ void correlate_half(const float* input, const float* kernel, float* output, int outputs,
                               int kernel_size) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= outputs) return;
    __half sum = __float2half(0.0f);
    for (int j = 0; j < kernel_size; ++j)
        sum = __hfma(__float2half(input[i + j]), __float2half(kernel[j]), sum);  // BUG: 11 significant bits
    output[i] = __half2float(sum);
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int outputs = input_size - kernel_size + 1;
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    correlate_half<<<blocks, BLOCK>>>(input, kernel, output, outputs, kernel_size);
}
