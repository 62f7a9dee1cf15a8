// 2D convolution (valid cross-correlation) in FP32:
//   output[i][j] = sum over m < kernel_rows, n < kernel_cols of input[i + m][j + n] * kernel[m][n]
// for i < input_rows - kernel_rows + 1 and j < input_cols - kernel_cols + 1. The kernel is NOT
// flipped. Every matrix is row-major, every pointer a device pointer; 1 <= kernel_rows <= input_rows,
// 1 <= kernel_cols <= input_cols, and the kernel is at most 31 × 31.
// output arrives filled with NaN: write every element. `grader show convolution_2d` prints the full
// statement.
#include <cuda_runtime.h>

__global__ void convolution_kernel(const float* input, const float* kernel, float* output, int input_rows,
                                   int input_cols, int kernel_rows, int kernel_cols) {
    // Your kernel here: compute one or more elements of output.
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
                      int kernel_rows, int kernel_cols) {
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    dim3 block(32, 8);
    dim3 grid((output_cols + block.x - 1) / block.x, (output_rows + block.y - 1) / block.y);
    convolution_kernel<<<grid, block>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
}
