// expect: WRONG_ANSWER
// expect-message: differ from the reference
// Level 1 with the input's row stride taken from the wrong dimension: input[(row + m) * input_rows +
// col + n]. A row-major matrix with input_cols columns starts row r at r · input_cols; input_rows is
// the length of a column. Every square image hides the mistake (LeetGPU's examples are 3 × 3, 64 × 64
// and 128 × 128), and the first rectangular one shows it: from the second row of taps on, each read
// lands input_rows - input_cols places early or late, in a neighbouring row or past the end of the
// input (in the emulator that read is itself reported). The same slip in the output's index, or in the
// kernel's (m * kernel_rows + n), fails the same way on a rectangular output or kernel.
#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;
constexpr int BLOCK_Y = 8;

__global__ void convolution_swapped(const float* input, const float* kernel, float* output, int input_rows,
                                    int kernel_rows, int kernel_cols, int output_rows, int output_cols) {
    int col = blockIdx.x * BLOCK_X + threadIdx.x;
    int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= output_rows || col >= output_cols) return;

    float acc = 0.0f;
    for (int m = 0; m < kernel_rows; ++m) {
        const float* line = input + (size_t)(row + m) * input_rows + col;  // BUG: the stride is input_cols
        for (int n = 0; n < kernel_cols; ++n) acc += line[n] * kernel[m * kernel_cols + n];
    }
    output[(size_t)row * output_cols + col] = acc;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
                      int kernel_rows, int kernel_cols) {
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((output_cols + BLOCK_X - 1) / BLOCK_X, (output_rows + BLOCK_Y - 1) / BLOCK_Y);
    convolution_swapped<<<grid, block>>>(input, kernel, output, input_rows, kernel_rows, kernel_cols, output_rows,
                                         output_cols);
}
