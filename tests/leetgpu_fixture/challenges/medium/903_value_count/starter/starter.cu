#include <cuda_runtime.h>

// input and counts live in GPU memory.
extern "C" void solve(const int* input, int* counts, int N, int num_bins) {
}
