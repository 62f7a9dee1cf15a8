// expect: WRONG_ANSWER
// expect-message: histogram[0] = 0, expected 1
// Level 2 without its cudaMemsetAsync: each block's counts are added with atomicAdd to whatever the
// histogram held before the call. The histogram is an output, and the grader fills it with 0xFF bytes
// before every call, so every bin starts at -1 and comes out one short (a bin no value falls in reads
// -1). LeetGPU's graded tests happen to hand solve a histogram of zeros, so this passes there; its
// signature declares the histogram write-only ("out"), and its own example passes an uninitialised
// one. The fix: cudaMemsetAsync(histogram, 0, num_bins * sizeof(int)) before the kernel, in the same
// stream, in every call (or a kernel that writes every bin instead of adding to it).
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned ITEMS = 64;
constexpr unsigned CHUNK = BLOCK * ITEMS;

__global__ void count_shared(const int* in, int* histogram, unsigned count, unsigned bins) {
    extern __shared__ int local[];
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
        if (c != 0) atomicAdd(&histogram[b], c);  // BUG: adds to a histogram never set to zero
    }
}

extern "C" void solve(const int* input, int* histogram, int N, int num_bins) {
    unsigned count = (unsigned)N, bins = (unsigned)num_bins;
    count_shared<<<(count - 1) / CHUNK + 1, BLOCK, bins * sizeof(int)>>>(input, histogram, count, bins);
}
