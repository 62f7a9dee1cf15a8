// expect: OUT_OF_BOUNDS
// expect-message: past its end
// One thread per INPUT element, as if the output had the input's size (a "same" convolution): thread
// (row, col) runs for every row < input_rows and col < input_cols, skips the taps that fall off the
// input's bottom or right edge (as if zeros lay there) and writes output[row * input_cols + col]. But
// the output of a valid convolution is smaller: (input_rows - kernel_rows + 1) × (input_cols -
// kernel_cols + 1). Its row stride is output_cols, not input_cols, and the threads of the last
// kernel_rows - 1 rows write past the output's end, into memory that is not the output's. The grader
// surrounds every buffer with guard bytes and reports the writes past the end, and how far they reach.
// The fix: size the grid and the bounds check by the output, and index it with output_cols.
#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;
constexpr int BLOCK_Y = 8;

__global__ void convolution_same_size(const float* input, const float* kernel, float* output, int input_rows,
                                      int input_cols, int kernel_rows, int kernel_cols) {
    int col = blockIdx.x * BLOCK_X + threadIdx.x;
    int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= input_rows || col >= input_cols) return;  // BUG: the output has fewer rows and columns

    float acc = 0.0f;
    for (int m = 0; m < kernel_rows && row + m < input_rows; ++m) {
        for (int n = 0; n < kernel_cols && col + n < input_cols; ++n) {
            acc += input[(size_t)(row + m) * input_cols + col + n] * kernel[m * kernel_cols + n];
        }
    }
    output[(size_t)row * input_cols + col] = acc;  // BUG: past the end for the last kernel_rows - 1 rows
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
                      int kernel_rows, int kernel_cols) {
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid((input_cols + BLOCK_X - 1) / BLOCK_X, (input_rows + BLOCK_Y - 1) / BLOCK_Y);
    convolution_same_size<<<grid, block>>>(input, kernel, output, input_rows, input_cols, kernel_rows, kernel_cols);
}
