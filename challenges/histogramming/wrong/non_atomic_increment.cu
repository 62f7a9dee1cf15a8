// expect: WRONG_ANSWER
// backends: cuda
// Level 1 with histogram[v] += 1 in place of atomicAdd(&histogram[v], 1). The += is three steps, a
// read, an addition and a write, and threads counting the same bin at the same moment all read the
// same old count and all write it back plus one: every increment but one is lost. On a GPU this
// happens all the time (the 32 lanes of a warp run the read together, so lanes with equal values
// collide in every warp, and thousands of threads are in flight), and the counts come out far too low
// (on an H200, already at 2 values into 2 bins, on each of three seeds tried). Only the GPU promises
// that verdict. The CPU emulator runs a block's threads one after another between barriers, so within
// a block no += is ever interrupted; its blocks do run in parallel on the machine's cores, and there
// updates are lost only when two cores hit one counter at the same moment: on a 2-core machine, 10 of
// 18 runs were a RACE and 8 ACCEPTED (on one core, every run would pass). The fix: atomicAdd, which
// makes the three steps one.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void count_global(const int* in, int* histogram, unsigned count) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) histogram[in[i]] += 1;  // BUG: a read, an addition and a write, not one atomic step
}

extern "C" void solve(const int* input, int* histogram, int N, int num_bins) {
    if (cudaMemsetAsync(histogram, 0, (size_t)num_bins * sizeof(int)) != cudaSuccess) return;
    unsigned count = (unsigned)N;
    count_global<<<(count - 1) / BLOCK + 1, BLOCK>>>(input, histogram, count);
}
