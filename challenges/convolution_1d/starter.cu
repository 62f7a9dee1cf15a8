// 1D convolution: output[i] = input[i] * kernel[0] + input[i + 1] * kernel[1] + ...
//                             + input[i + kernel_size - 1] * kernel[kernel_size - 1]
// for i = 0 .. input_size - kernel_size, in FP32 ("valid": only windows that lie inside the input; the
// kernel is not flipped).
//   input (input_size floats), kernel (kernel_size floats) and output (input_size - kernel_size + 1
//   floats) are device pointers; 1 <= kernel_size <= input_size, and kernel_size <= 2047.
// output arrives filled with NaN: write every element. `grader show convolution_1d` prints the full
// statement.
#include <cuda_runtime.h>

__global__ void convolution_1d(const float* input, const float* kernel, float* output, int input_size,
                               int kernel_size) {
    // Your kernel here: one output (or several) per thread.
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int output_size = input_size - kernel_size + 1;
    int threads = 256;
    int blocks = (output_size + threads - 1) / threads;
    convolution_1d<<<blocks, threads>>>(input, kernel, output, input_size, kernel_size);
}
