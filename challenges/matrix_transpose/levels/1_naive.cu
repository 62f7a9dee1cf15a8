// expect: ACCEPTED
// Level 1 — one thread per element.
//
// Thread (row, col) copies input[row][col] to output[col][row]. A warp is 32 threads of one row of
// the block, on 32 neighbouring columns: its reads are 32 consecutive floats of one input row, one
// 128-byte line, every byte used. Its writes are the same 32 elements in their transposed places,
// `rows` floats apart: 32 different lines of the output, 4 bytes in each. A coalesced store of a warp
// is 4 transactions of 32 bytes; this one is 32, each carrying 4 useful bytes of its 32-byte sector,
// and the rate at which the memory system takes them, not the bytes, limits this kernel. (The other
// warps of the block fill the neighbouring bytes of those sectors, in the L2 cache if they are
// still there.)
//
// The grid is one-dimensional, each block finding its place from its index: a grid's y dimension
// stops at 65,535 blocks, which a tall matrix (a column of a million elements needs 125,000 blocks of
// 8 rows) would pass, while x goes to 2^31 - 1.
#include <cuda_runtime.h>

constexpr int BLOCK_X = 32;  // columns per block: one warp across
constexpr int BLOCK_Y = 8;   // rows per block: 256 threads

__global__ void transpose_naive(const float* input, float* output, int rows, int cols) {
    unsigned column_blocks = (unsigned)(cols - 1) / BLOCK_X + 1;
    unsigned row = blockIdx.x / column_blocks * BLOCK_Y + threadIdx.y;
    unsigned col = blockIdx.x % column_blocks * BLOCK_X + threadIdx.x;
    // The last blocks of each direction overhang the matrix unless it is a multiple of the block.
    // size_t offsets: rows × cols may pass 2^31 even though each fits an int.
    if (row < (unsigned)rows && col < (unsigned)cols)
        output[(size_t)col * rows + row] = input[(size_t)row * cols + col];
}

extern "C" void solve(const float* input, float* output, int rows, int cols) {
    unsigned column_blocks = (unsigned)(cols - 1) / BLOCK_X + 1;  // rounded up; cols + 31 could overflow
    unsigned row_blocks = (unsigned)(rows - 1) / BLOCK_Y + 1;
    transpose_naive<<<column_blocks * row_blocks, dim3(BLOCK_X, BLOCK_Y)>>>(input, output, rows, cols);
}
