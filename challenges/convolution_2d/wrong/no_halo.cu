// expect: WRONG_ANSWER
// expect-message: differ from the reference
// A shared-memory tile without its halo. Each thread of a 32 × 16 block copies the one input value at
// its own output's position, so the tile holds 32 × 16 input values, and the taps that reach past the
// tile's right or bottom edge (kernel_cols - 1 columns and kernel_rows - 1 rows of them) are skipped,
// as if the input were zero there. But the outputs near those edges need the values just beyond them:
// they belong to the next tiles, and only the tile's own block never loads them. Every output within
// kernel_cols - 1 columns of a tile's right edge or kernel_rows - 1 rows of its bottom edge is missing
// terms. An image that fits in one tile passes (LeetGPU's 3 × 3 example does); the first that does not
// fails. The fix is level 2's: copy the halo too, here (16 + kernel_rows - 1) × (32 + kernel_cols - 1)
// values, more than one per thread.
#include <cuda_runtime.h>

constexpr int TILE_COLS = 32;
constexpr int TILE_ROWS = 16;
constexpr int MAX_KERNEL = 31;

__constant__ float c_kernel[MAX_KERNEL * MAX_KERNEL];

__global__ void convolution_no_halo(const float* input, float* output, int input_rows, int input_cols,
                                    int kernel_rows, int kernel_cols, int output_rows, int output_cols) {
    __shared__ float tile[TILE_ROWS][TILE_COLS];  // BUG: no room for the halo
    int row = blockIdx.y * TILE_ROWS + threadIdx.y;
    int col = blockIdx.x * TILE_COLS + threadIdx.x;
    bool inside = row < input_rows && col < input_cols;
    tile[threadIdx.y][threadIdx.x] = inside ? input[(size_t)row * input_cols + col] : 0.0f;
    __syncthreads();

    if (row >= output_rows || col >= output_cols) return;
    float acc = 0.0f;
    for (int m = 0; m < kernel_rows; ++m) {
        for (int n = 0; n < kernel_cols; ++n) {
            int r = threadIdx.y + m, c = threadIdx.x + n;
            if (r < TILE_ROWS && c < TILE_COLS) acc += tile[r][c] * c_kernel[m * kernel_cols + n];  // BUG: else skipped
        }
    }
    output[(size_t)row * output_cols + col] = acc;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
                      int kernel_rows, int kernel_cols) {
    if (kernel_rows > MAX_KERNEL || kernel_cols > MAX_KERNEL) return;
    size_t kernel_bytes = (size_t)kernel_rows * kernel_cols * sizeof(float);
    if (cudaMemcpyToSymbol(c_kernel, kernel, kernel_bytes, 0, cudaMemcpyDeviceToDevice) != cudaSuccess) return;
    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    dim3 block(TILE_COLS, TILE_ROWS);
    dim3 grid((output_cols + TILE_COLS - 1) / TILE_COLS, (output_rows + TILE_ROWS - 1) / TILE_ROWS);
    convolution_no_halo<<<grid, block>>>(input, output, input_rows, input_cols, kernel_rows, kernel_cols,
                                         output_rows, output_cols);
}
