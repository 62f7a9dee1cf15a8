// expect: ACCEPTED
// Level 1 — one thread per element.
//
// Thread i adds element i. Neighbouring threads take neighbouring elements, so the 32 loads of a
// warp fall in one 128-byte line of A (and one of B) and its 32 stores fill one line of C: every byte
// the memory system fetches is used. The grid is rounded up to cover N, so the last block has
// threads past the end, and the bounds check turns them away.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__global__ void vector_add_naive(const float* A, const float* B, float* C, int N) {
    // Unsigned: the last block's threads reach N - 1 + 255, past INT_MAX when N is near it, and an
    // int would overflow there; every such index still fits in 32 unsigned bits.
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (unsigned)N) C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int blocks = (N - 1) / BLOCK + 1;  // rounded up; N + BLOCK - 1 would overflow near INT_MAX
    vector_add_naive<<<blocks, BLOCK>>>(A, B, C, N);
}
