// expect: ACCEPTED
// Level 2 — privatisation: a histogram per block in shared memory, merged once per bin.
//
// Over level 1: each block counts its part of the input into a private histogram of num_bins ints in
// shared memory (dynamic, sized at launch), with shared-memory atomicAdd, which the multiprocessor
// applies itself in a few cycles instead of sending every increment to L2. When the block is done
// (a barrier: every increment has landed), its threads add the block's counts into the global
// histogram, one atomicAdd per bin that the block saw at all.
//
// Each block covers CHUNK = 256 threads × 64 = 16,384 elements, the threads side by side on each of
// their 64 loads (coalesced). At N = 50 million that is 3,052 blocks: the global atomics fall from
// 50 million to at most 3,052 × num_bins (781,000 at 256 bins, 6,104 at 2), a 64th or less.
// Measured on an H200 at N = 50 million (`grader check`, median with L2 flushed): 0.098 ms with 256
// bins (131 times faster than level 1), 0.113 ms with 1,024 (37 times), 0.086 ms with 2 (242 times);
// in a harness of our own, about 0.095 ms when every value falls in one bin: the shared atomics'
// queues, even 32 lanes on one counter, no longer show. What is left is the reads, at 1.8 to 2.3 TB/s,
// under half of what the memory gives: one 4-byte load per step of each thread, and per block a
// zeroing, two barriers and a merge.
//
// Shared memory holds up to 12,288 bins in the 48 KB a block gets without asking; past that (LeetGPU
// allows 1,024) the kernel of level 1 counts instead, so every num_bins is right.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;                       // threads per block
constexpr unsigned ITEMS = 64;                        // elements per thread
constexpr unsigned CHUNK = BLOCK * ITEMS;             // elements per block
constexpr unsigned MAX_SHARED_BINS = 48 * 1024 / 4;   // ints in the default dynamic shared memory limit

__global__ void count_shared(const int* in, int* histogram, unsigned count, unsigned bins) {
    extern __shared__ int local[];  // bins ints, sized by the launch
    for (unsigned b = threadIdx.x; b < bins; b += BLOCK) local[b] = 0;
    __syncthreads();  // every count is 0 before any thread adds to one
    // Unsigned: blocks × CHUNK stays below count + CHUNK <= INT_MAX + CHUNK, which 32 bits hold.
    unsigned first = blockIdx.x * CHUNK + threadIdx.x;
    for (unsigned k = 0; k < ITEMS; ++k) {
        unsigned i = first + k * BLOCK;
        if (i < count) atomicAdd(&local[in[i]], 1);
    }
    __syncthreads();  // every increment of the block has landed
    for (unsigned b = threadIdx.x; b < bins; b += BLOCK) {
        int c = local[b];
        if (c != 0) atomicAdd(&histogram[b], c);  // bins the block never saw cost nothing
    }
}

// The fallback for more bins than shared memory holds: level 1's kernel.
__global__ void count_global(const int* in, int* histogram, unsigned count) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) atomicAdd(&histogram[in[i]], 1);
}

extern "C" void solve(const int* input, int* histogram, int N, int num_bins) {
    if (cudaMemsetAsync(histogram, 0, (size_t)num_bins * sizeof(int)) != cudaSuccess) return;
    unsigned count = (unsigned)N, bins = (unsigned)num_bins;
    if (bins > MAX_SHARED_BINS) {
        count_global<<<(count - 1) / BLOCK + 1, BLOCK>>>(input, histogram, count);
        return;
    }
    unsigned blocks = (count - 1) / CHUNK + 1;  // N >= 1
    count_shared<<<blocks, BLOCK, bins * sizeof(int)>>>(input, histogram, count, bins);
}
