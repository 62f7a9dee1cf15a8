// expect: WRONG_ANSWER
// expect-message: differ from the reference
// A convolution as a signal-processing textbook defines it: the kernel flipped in both directions,
// output[i][j] = sum of input[i + m][j + n] · kernel[kernel_rows - 1 - m][kernel_cols - 1 - n]. LeetGPU's
// "2D convolution" is what deep-learning libraries call one (PyTorch's conv2d, cuDNN): a
// cross-correlation, the kernel applied as it is, tap (m, n) on input[i + m][j + n]. The two agree
// only for a kernel that is symmetric under the flip, such as a single tap; every case with a kernel
// of two taps or more fails.
#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;
constexpr int BLOCK_Y = 8;

__global__ void convolution_flipped(const float* input, const float* kernel, float* output, int input_cols,
                                    int kernel_rows, int kernel_cols, int output_rows, int output_cols) {
    int col = blockIdx.x * BLOCK_X + threadIdx.x;
    int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= output_rows || col >= output_cols) return;

    float acc = 0.0f;
    for (int m = 0; m < kernel_rows; ++m) {
        const float* line = input + (size_t)(row + m) * input_cols + col;
        const float* taps = kernel + (kernel_rows - 1 - m) * kernel_cols;  // BUG: the kernel is not flipped
        for (int n = 0; n < kernel_cols; ++n) acc += line[n] * taps[kernel_cols - 1 - n];
    }
    output[(size_t)row * output_cols + col] = acc;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
                      int kernel_rows, int kernel_cols) {
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((output_cols + BLOCK_X - 1) / BLOCK_X, (output_rows + BLOCK_Y - 1) / BLOCK_Y);
    convolution_flipped<<<grid, block>>>(input, kernel, output, input_cols, kernel_rows, kernel_cols, output_rows,
                                         output_cols);
}
