// expect: WRONG_ANSWER
// expect-message: reduced-precision
// Moves each element through a half, as a kernel might to halve the bytes it keeps in shared memory
// or registers. Half keeps 11 significant bits where float keeps 24, so nearly every element comes
// out changed, by up to 2^-12 of its size: close, but a transpose moves values, it does not round
// them (statement.md, "Accuracy").
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void transpose_half(const float* input, float* output, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        __half value = __float2half(input[row * cols + col]);  // BUG: rounds to 11 bits
        output[col * rows + row] = __half2float(value);
    }
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    dim3 block(16, 16);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    transpose_half<<<grid, block>>>(input, output, rows, cols);
}
