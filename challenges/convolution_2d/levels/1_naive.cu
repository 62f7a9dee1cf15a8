// expect: ACCEPTED
// Level 1 — one thread per output, everything from global memory.
//
// Thread (row, col) computes output[row][col] on its own: it walks the kernel_rows × kernel_cols
// window whose top-left corner is input[row][col], multiplying each input value by the kernel value
// at the same place (no flip: LeetGPU's "convolution" is a cross-correlation) and adding the products
// in one FP32 register. Threads next to each other in x take neighbouring columns, so for every tap a
// warp reads 32 consecutive input values (one coalesced load) and all 32 read the same kernel value
// (one broadcast).
//
// Correct and simple: every tap costs two loads for one multiply-add. The caches catch most of them
// (the window of one thread overlaps its neighbours' almost entirely), but each load still passes
// through the L1 cache's tag check and the kernel values take the same path as the image. Level 2
// stages both where a load is cheaper.
#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;  // threads per block along a row: one warp, 32 neighbouring columns
constexpr int BLOCK_Y = 8;   // rows of threads per block

__global__ void convolution_naive(const float* input, const float* kernel, float* output, int input_cols,
                                  int kernel_rows, int kernel_cols, int output_rows, int output_cols) {
    int col = blockIdx.x * BLOCK_X + threadIdx.x;
    int row = blockIdx.y * BLOCK_Y + threadIdx.y;
    if (row >= output_rows || col >= output_cols) return;  // the last blocks hang over the edges

    float acc = 0.0f;
    for (int m = 0; m < kernel_rows; ++m) {
        const float* line = input + (size_t)(row + m) * input_cols + col;  // input[row + m][col ...]
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
    convolution_naive<<<grid, block>>>(input, kernel, output, input_cols, kernel_rows, kernel_cols, output_rows,
                                       output_cols);
}
