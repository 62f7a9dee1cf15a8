// expect: ACCEPTED
// Level 3 — register strips: each thread computes 8 outputs, and each value it loads feeds 8 taps.
//
// Over level 2: a thread computes a column strip of STRIP = 8 outputs, rows r .. r + 7 of one
// column, instead of one. Output r + j at tap (m, n) reads input row r + j + m, so for one kernel
// column n the strip's 8 outputs at kernel row m read 8 consecutive rows of the tile, and at kernel
// row m + 1 the same rows moved down by one. The thread keeps those 8 values in registers (the
// window), multiplies all of them by the one kernel value of tap (m, n), then slides the window down:
// one row leaves, one row is loaded from shared memory. Per tap that is one shared load and one
// constant-cache read for 8 multiply-adds, where level 2 needs one of each for every multiply-add.
// The window lives in registers because its indices are compile-time constants (the loops over it
// are unrolled); the slide is register renaming once the compiler unrolls the kernel-row loop.
//
// The block is 32 × 8 threads and its tile 32 columns × 64 rows of outputs: a warp is one row of 32
// threads on 32 neighbouring columns, so its shared loads hit 32 different banks. The input piece the
// tile reads (64 + kernel_rows - 1 rows, 32 + kernel_cols - 1 columns) is copied into shared memory as
// in level 2, with one row more: the window's last slide loads a row no output uses.
//
// What should move: shared-memory loads per multiply-add fall from 1 to 1/8, and the loop runs
// mostly multiply-adds. At LeetGPU's 15 × 15 and at 31 × 31 the arithmetic is the limit, so roughly
// 2-4× over level 2; at 3 × 3 on a large image memory bandwidth stays the limit, and fewer, larger
// blocks copy a little less halo (67 × 34 values per 2,048 outputs instead of 18 × 34 per 512).
#include <cuda_runtime.h>

constexpr int TILE_COLS = 32;                 // output columns per tile: one warp, neighbouring columns
constexpr int THREAD_ROWS = 8;                // rows of threads per block
constexpr int STRIP = 8;                      // outputs per thread, down one column
constexpr int TILE_ROWS = THREAD_ROWS * STRIP;  // output rows per tile: 64
constexpr int MAX_KERNEL = 31;                // LeetGPU's bound on kernel_rows and kernel_cols

__constant__ float c_kernel[MAX_KERNEL * MAX_KERNEL];  // row-major, kernel_cols values per row

__global__ void convolution_strips(const float* input, float* output, int input_rows, int input_cols,
                                   int kernel_rows, int kernel_cols, int output_rows, int output_cols) {
    extern __shared__ float tile[];  // piece_rows × piece_cols input values, row-major
    int piece_rows = TILE_ROWS + kernel_rows;  // the halo's kernel_rows - 1 rows, and the spare row
    int piece_cols = TILE_COLS + kernel_cols - 1;
    int first_row = blockIdx.y * TILE_ROWS;
    int first_col = blockIdx.x * TILE_COLS;

    // Copy the piece (0 past the input's edge: finite, and read by no output that is written).
    for (int r = threadIdx.y; r < piece_rows; r += THREAD_ROWS) {
        for (int c = threadIdx.x; c < piece_cols; c += TILE_COLS) {
            int in_row = first_row + r, in_col = first_col + c;
            bool inside = in_row < input_rows && in_col < input_cols;
            tile[r * piece_cols + c] = inside ? input[(size_t)in_row * input_cols + in_col] : 0.0f;
        }
    }
    __syncthreads();  // the whole piece is in place before any thread reads it

    float acc[STRIP];
#pragma unroll
    for (int j = 0; j < STRIP; ++j) acc[j] = 0.0f;

    int strip_row = threadIdx.y * STRIP;  // the strip's first output row, within the tile
    for (int n = 0; n < kernel_cols; ++n) {
        // Column n of the window: tile rows strip_row .. strip_row + STRIP - 1 at column threadIdx.x + n.
        const float* column = tile + strip_row * piece_cols + threadIdx.x + n;
        float window[STRIP];
#pragma unroll
        for (int j = 0; j < STRIP; ++j) window[j] = column[j * piece_cols];
#pragma unroll 4
        for (int m = 0; m < kernel_rows; ++m) {
            float weight = c_kernel[m * kernel_cols + n];
#pragma unroll
            for (int j = 0; j < STRIP; ++j) acc[j] += window[j] * weight;  // output strip_row + j, tap (m, n)
#pragma unroll
            for (int j = 0; j + 1 < STRIP; ++j) window[j] = window[j + 1];  // slide down one row
            window[STRIP - 1] = column[(STRIP + m) * piece_cols];
        }
    }

    int col = first_col + threadIdx.x;
    if (col >= output_cols) return;
#pragma unroll
    for (int j = 0; j < STRIP; ++j) {
        int row = first_row + strip_row + j;
        if (row < output_rows) output[(size_t)row * output_cols + col] = acc[j];
    }
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_rows, int input_cols,
                      int kernel_rows, int kernel_cols) {
    if (kernel_rows > MAX_KERNEL || kernel_cols > MAX_KERNEL) return;  // beyond the challenge's bounds
    size_t kernel_bytes = (size_t)kernel_rows * kernel_cols * sizeof(float);
    if (cudaMemcpyToSymbol(c_kernel, kernel, kernel_bytes, 0, cudaMemcpyDeviceToDevice) != cudaSuccess) return;

    int output_rows = input_rows - kernel_rows + 1;
    int output_cols = input_cols - kernel_cols + 1;
    size_t shared_bytes = (size_t)(TILE_ROWS + kernel_rows) * (TILE_COLS + kernel_cols - 1) * sizeof(float);
    dim3 block(TILE_COLS, THREAD_ROWS);
    dim3 grid((output_cols + TILE_COLS - 1) / TILE_COLS, (output_rows + TILE_ROWS - 1) / TILE_ROWS);
    convolution_strips<<<grid, block, shared_bytes>>>(input, output, input_rows, input_cols, kernel_rows,
                                                      kernel_cols, output_rows, output_cols);
}
