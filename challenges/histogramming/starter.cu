// Histogramming: histogram[b] = how many of input[0 .. N - 1] equal b, for every b in [0, num_bins).
//   input is a device pointer to N ints, each in [0, num_bins); histogram a device pointer to num_bins
//   ints. N is any size from 1 up; num_bins from 1 to 1,024.
// histogram arrives filled with -1 in every bin, not 0: set every count yourself (a kernel that only
// adds to it must zero it first). `grader show histogramming` prints the full statement.
#include <cuda_runtime.h>

__global__ void histogram_kernel(const int* input, int* histogram, int N, int num_bins) {
    // Your kernel here: count each value into its bin.
}

extern "C" void solve(const int* input, int* histogram, int N, int num_bins) {
    int threads = 256;
    int blocks = (N + threads - 1) / threads;
    histogram_kernel<<<blocks, threads>>>(input, histogram, N, num_bins);
}
