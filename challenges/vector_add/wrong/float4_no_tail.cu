// expect: WRONG_ANSWER
// expect-message: never written
// float4 loads and stores over the first 4·(N / 4) elements, and nothing for the rest: the last
// N % 4 elements keep the NaN that C arrives filled with. At N = 1, 2 or 3 no element is written.
#include <cuda_runtime.h>

__global__ void vector_add_float4_only(const float4* A, const float4* B, float4* C, int quads) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < quads) {
        float4 a = A[i], b = B[i];
        C[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
    // BUG: no tail: elements 4·quads .. N - 1 are never computed
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int threads = 256;
    int blocks = (N + 4 * threads - 1) / (4 * threads);  // at least one block, so the launch itself is valid
    vector_add_float4_only<<<blocks, threads>>>(reinterpret_cast<const float4*>(A),
                                                reinterpret_cast<const float4*>(B),
                                                reinterpret_cast<float4*>(C), N / 4);
}
