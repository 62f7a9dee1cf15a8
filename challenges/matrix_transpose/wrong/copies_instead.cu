// expect: WRONG_ANSWER
// expect-message: differ from the reference
// Reads input[row][col] and stores it at the same offset, row * cols + col, as if the output were
// laid out like the input: a copy, not a transpose. Every index is in bounds, and the single element
// and both vectors pass (their transposes have the same bytes); the 2×3 example is the first to fail,
// with four of its six elements in the wrong places.
#include <cuda_runtime.h>

__global__ void copy_not_transpose(const float* input, float* output, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) output[row * cols + col] = input[row * cols + col];  // BUG: col * rows + row
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 block(16, 16);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    copy_not_transpose<<<grid, block>>>(input, output, rows, cols);
}
