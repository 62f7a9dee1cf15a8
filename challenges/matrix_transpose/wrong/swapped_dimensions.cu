// expect: WRONG_ANSWER
// expect-message: differ from the reference
// A correct kernel called with rows and cols exchanged, so it transposes a cols × rows matrix. Every
// index stays in bounds (the element count is the same), and where rows or cols is 1 the result is
// even right: a row or column vector has the same bytes as its transpose, and so does its
// misreading. At 2×3 it reads input as 3×2 and writes {a, c, e, b, d, f} where the transpose of
// {a, b, c, d, e, f} is {a, d, b, e, c, f}: four of the six elements are wrong.
#include <cuda_runtime.h>

__global__ void transpose(const float* input, float* output, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) output[col * rows + row] = input[row * cols + col];
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 block(16, 16);
    dim3 grid((rows + block.x - 1) / block.x, (cols + block.y - 1) / block.y);
    transpose<<<grid, block>>>(input, output, cols, rows);  // BUG: the kernel takes (rows, cols)
}
