// Matrix transpose: output[j][i] = input[i][j] in FP32.
//   input is rows×cols, output is cols×rows, both row-major, both device pointers:
//   input[i][j] is input[i * cols + j], output[j][i] is output[j * rows + i].
// output arrives filled with NaN: write every element. `grader show matrix_transpose` prints the
// full statement.
#include <cuda_runtime.h>

__global__ void matrix_transpose(const float* input, float* output, int rows, int cols) {
    // Your kernel here: move one or more elements of input to their place in output.
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 block(16, 16);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    matrix_transpose<<<grid, block>>>(input, output, rows, cols);
}
