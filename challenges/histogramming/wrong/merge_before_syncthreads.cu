// expect: RACE
// expect-message: __syncthreads
// backends: emulator
// Level 2 with the barrier between counting and merging left out: a thread adds bin b of the block's
// shared histogram to the global one as soon as it has counted its own 64 elements, whether or not
// the block's other threads have finished counting theirs. Increments that land after the read are
// lost. On a GPU the outcome depends on how the warps happen to be scheduled (a fast warp merges bins
// a slow one is still counting into), so only the emulator promises a verdict: it runs each block's
// threads in forward and in reverse order. Forward, thread 0 merges bin 0 before any other thread has
// counted anything; reversed, thread 0 runs last and finds every count done. Two different answers
// from one input: a race. (On an H200 it came out WRONG_ANSWER on each of three seeds tried, short by
// up to 2% of the counts at 16,385 values, but nothing in CUDA promises that.) The fix is the
// __syncthreads() marked below.
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
    // BUG: the __syncthreads() that belongs here is missing
    for (unsigned b = threadIdx.x; b < bins; b += BLOCK) {
        int c = local[b];
        if (c != 0) atomicAdd(&histogram[b], c);
    }
}

extern "C" void solve(const int* input, int* histogram, int N, int num_bins) {
    if (cudaMemsetAsync(histogram, 0, (size_t)num_bins * sizeof(int)) != cudaSuccess) return;
    unsigned count = (unsigned)N, bins = (unsigned)num_bins;
    count_shared<<<(count - 1) / CHUNK + 1, BLOCK, bins * sizeof(int)>>>(input, histogram, count, bins);
}
