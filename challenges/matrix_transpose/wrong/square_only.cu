// expect: WRONG_ANSWER
// expect-message: never written
// A transpose written for square matrices: n = rows serves as both dimensions, in the grid, the bounds
// check and both row strides. It is right whenever rows == cols, so 1×1, 32×32 and 64×64 pass; the
// first non-square case, the 1×1000 row vector, launches one thread for one element and leaves the
// other 999 as the NaN the output arrives filled with. (Had a tall matrix come first, n² elements
// would have been written into an output of rows × cols, past its end: the cases put each wide shape
// before its tall mirror so that this mistake is reported as what it is.)
#include <cuda_runtime.h>

__global__ void transpose_square(const float* input, float* output, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) output[col * n + row] = input[row * n + col];
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    int n = rows;  // BUG: assumes cols == rows
    dim3 block(16, 16);
    dim3 grid((n + block.x - 1) / block.x, (n + block.y - 1) / block.y);
    transpose_square<<<grid, block>>>(input, output, n);
}
