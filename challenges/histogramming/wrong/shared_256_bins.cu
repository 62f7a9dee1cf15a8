// expect: RUNTIME_ERROR
// A shared histogram sized for 256 bins, LeetGPU's timed num_bins, whatever num_bins is: the launch
// asks for 256 ints of dynamic shared memory, and num_bins runs up to 1,024. With more than 256 bins
// the zeroing loop, the increment of every value above 255 and the merge index past the end of what
// the block has. On a GPU a block's shared memory is a window of the size it asked for (rounded up a
// little), and an access past its end is out of range: an illegal address, which ends the launch and
// every CUDA call after it (cudaErrorIllegalAddress on an H200). The CPU emulator bounds each block's
// dynamic shared memory by its launch's request, to 16 bytes, and fails the launch the same way,
// naming it. So the verdict is a runtime
// error, on the first case with more than 256 bins (the second: one value into 1,024 bins), not a
// wrong answer: the launch fails before any count is read. The fix: size it with num_bins,
// num_bins * sizeof(int) bytes (4 KB at 1,024 bins, well inside the 48 KB a block gets).
// (A fixed static array, __shared__ int local[256], is the same bug, and a GPU treats it the same
// way; the emulator does not bound static shared arrays, and there the stray writes land in
// whatever lies next to the array: a wrong count, or a crash of the worker.)
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned ITEMS = 64;
constexpr unsigned CHUNK = BLOCK * ITEMS;
constexpr unsigned BINS = 256;  // BUG: num_bins can be up to 1,024

__global__ void count_shared(const int* in, int* histogram, unsigned count, unsigned bins) {
    extern __shared__ int local[];  // BINS ints, whatever bins is
    for (unsigned b = threadIdx.x; b < bins; b += BLOCK) local[b] = 0;
    __syncthreads();
    unsigned first = blockIdx.x * CHUNK + threadIdx.x;
    for (unsigned k = 0; k < ITEMS; ++k) {
        unsigned i = first + k * BLOCK;
        if (i < count) atomicAdd(&local[in[i]], 1);
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < bins; b += BLOCK) {
        int c = local[b];
        if (c != 0) atomicAdd(&histogram[b], c);
    }
}

extern "C" void solve(const int* input, int* histogram, int N, int num_bins) {
    if (cudaMemsetAsync(histogram, 0, (size_t)num_bins * sizeof(int)) != cudaSuccess) return;
    unsigned count = (unsigned)N;
    count_shared<<<(count - 1) / CHUNK + 1, BLOCK, BINS * sizeof(int)>>>(input, histogram, count, (unsigned)num_bins);
}
