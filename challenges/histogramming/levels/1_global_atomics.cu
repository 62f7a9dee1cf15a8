// expect: ACCEPTED
// Level 1 — one thread per element, one atomicAdd on the global histogram per element.
//
// The histogram is set to zero first (cudaMemsetAsync, in the same stream, so it is done before the
// kernel starts: the histogram arrives filled with -1, not 0). Then every thread reads one value and
// adds 1 to its bin with atomicAdd, which makes the read, the addition and the write one indivisible
// step: two threads counting the same bin at the same moment both count.
//
// Correct, and simple, but every one of the N increments is a read-modify-write that travels to the L2
// cache, where the atomic units of the memory partitions apply them, and increments of the same bin
// are applied one after another. The fewer the bins, the longer each one's queue. Measured on an H200
// at N = 50 million (`grader check`, median with L2 flushed): 12.9 ms with 256 bins, 4.2 ms with 1,024
// and 20.9 ms with 2; in a harness of our own, 36.6 ms when every value falls in one bin. Reading the
// 200 MB of input alone takes about 50 µs: the atomics cost 80 to 700 times that.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;  // threads per block, one element each

__global__ void count_global(const int* in, int* histogram, unsigned count) {
    // Unsigned: the last block's threads reach count - 1 + 255, past INT_MAX when N is near it.
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) atomicAdd(&histogram[in[i]], 1);
}

extern "C" void solve(const int* input, int* histogram, int N, int num_bins) {
    // Every count starts at 0; a failure here (the launch would then add to -1s) is left for the
    // grader to read from the CUDA error state.
    if (cudaMemsetAsync(histogram, 0, (size_t)num_bins * sizeof(int)) != cudaSuccess) return;
    unsigned count = (unsigned)N;
    unsigned blocks = (count - 1) / BLOCK + 1;  // N >= 1
    count_global<<<blocks, BLOCK>>>(input, histogram, count);
}
