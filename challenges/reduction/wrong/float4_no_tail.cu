// expect: WRONG_ANSWER
// expect-message: differ from the reference
// float4 loads over the first 4·(N / 4) elements, and nothing for the rest: the last N % 4 elements
// (up to 3) are never added. At N = 1, 2 or 3 the sum is 0. A missing element or two is a small error
// in a large sum, but in the small cases it is most of the answer.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 1024;

__device__ float warp_sum(float v) {
    for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_down_sync(0xffffffffu, v, k);
    return v;
}

__global__ void reduce_float4(const float4* in4, float* out, unsigned quads) {
    __shared__ float warp_sums[BLOCK / 32];
    unsigned stride = gridDim.x * BLOCK;
    float sum = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < quads; i += stride) {
        float4 v = in4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    // BUG: no tail: elements 4·quads .. N - 1 are never added
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    sum = warp_sum(sum);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = warp_sum(lane < BLOCK / 32 ? warp_sums[lane] : 0.0f);
        if (lane == 0) out[blockIdx.x] = sum;
    }
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned quads = (unsigned)N / 4;
    unsigned needed = quads > 0 ? (quads - 1) / BLOCK + 1 : 1;  // at least one block, to write the answer
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (blocks == 1) {
        reduce_float4<<<1, BLOCK>>>(reinterpret_cast<const float4*>(input), output, quads);
        return;
    }
    if (scratch == nullptr) cudaMalloc(&scratch, MAX_BLOCKS * sizeof(float));
    // The partial sums are padded with zeros to MAX_BLOCKS, a multiple of 4, so that the second pass
    // has no tail to lose: the only bug is the input's.
    cudaMemsetAsync(scratch, 0, MAX_BLOCKS * sizeof(float));
    reduce_float4<<<blocks, BLOCK>>>(reinterpret_cast<const float4*>(input), scratch, quads);
    reduce_float4<<<1, BLOCK>>>(reinterpret_cast<const float4*>(scratch), output, MAX_BLOCKS / 4);
}
