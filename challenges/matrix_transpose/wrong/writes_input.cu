// expect: INPUT_MODIFIED
// expect-message: input is an input
// Moves each element and clears its old place, as if the input were scratch space the grader no
// longer needs: the output is right, but input is const, and casting the const away does not make
// writing it allowed. The grader compares the input with what it uploaded.
#include <cuda_runtime.h>

__global__ void transpose_and_clear(float* input, float* output, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        output[col * rows + row] = input[row * cols + col];
        input[row * cols + col] = 0.0f;  // BUG: writes an input
    }
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 block(16, 16);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    transpose_and_clear<<<grid, block>>>(const_cast<float*>(input), output, rows, cols);
}
