// expect: WRONG_ANSWER
// A convolution as signal processing defines it: the kernel flipped, input[i + j] * kernel[K - 1 - j].
// The problem asks for a cross-correlation, input[i + j] * kernel[j], which is what deep learning calls
// a convolution (and what LeetGPU's formula says). The two agree only when the kernel is symmetric,
// or one tap long: LeetGPU's example kernel {1, 0, -1} gives {2, 2, 2} flipped instead of {-2, -2, -2}.
// Every output with two taps or more is wrong, by about as much as it is large.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__global__ void convolve_flipped(const float* input, const float* kernel, float* output, int outputs,
                                 int kernel_size) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= outputs) return;
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; ++j) sum += input[i + j] * kernel[kernel_size - 1 - j];  // BUG: flipped
    output[i] = sum;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int outputs = input_size - kernel_size + 1;
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    convolve_flipped<<<blocks, BLOCK>>>(input, kernel, output, outputs, kernel_size);
}
