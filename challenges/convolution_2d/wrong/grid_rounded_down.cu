// expect: RUNTIME_ERROR
// expect-message: empty
// expect-cuda: RUNTIME_ERROR
// Level 1 with the grid's size computed by plain integer division: output_cols / 32 blocks across and
// output_rows / 8 down, which rounds down. An output narrower than 32 or shorter than 8 gets a grid
// with no blocks at all, and CUDA refuses such a launch (cudaErrorInvalidValue), which is what the
// first case, a single output, shows. On larger shapes the division is just as wrong, more quietly:
// the last output_cols % 32 columns and output_rows % 8 rows have no thread and keep the NaN the
// output arrives filled with (LeetGPU's timed shape has 3058 = 95 · 32 + 18 columns). The fix is the
// rounded-up division (n + 31) / 32, with the bounds check in the kernel for the threads it adds.
#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;
constexpr int BLOCK_Y = 8;

__global__ void convolution_naive(const float* input, const float* kernel, float* output, int input_cols,
                                  int kernel_rows, int kernel_cols, int output_rows, int output_cols) {
    int col = blockIdx.x * BLOCK_X + threadIdx.x;
    int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= output_rows || col >= output_cols) return;

    float acc = 0.0f;
    for (int m = 0; m < kernel_rows; ++m) {
        const float* line = input + (size_t)(row + m) * input_cols + col;
        for (int n = 0; n < kernel_cols; ++n) acc += line[n] * kernel[m * kernel_cols + n];
    }
    output[(size_t)row * output_cols + col] = acc;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
                      int kernel_rows, int kernel_cols) {
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    dim3 block(BLOCK_X, BLOCK_Y);
    dim3 grid(output_cols / BLOCK_X, output_rows / BLOCK_Y);  // BUG: rounds down
    convolution_naive<<<grid, block>>>(input, kernel, output, input_cols, kernel_rows, kernel_cols, output_rows,
                                       output_cols);
}
