// expect: WRONG_ANSWER
// expect-message: NaN
// Each block adds its sum into output[0] with atomicAdd, but nothing sets output[0] to zero first:
// it holds whatever the last user of that memory left there. The grader fills it with NaN before
// every call, and NaN + anything is NaN, so every case fails; on LeetGPU the buffer often happens to
// hold 0 and the same code passes there by luck. A cudaMemsetAsync(output, 0, sizeof(float)) before
// the launch (same stream, so it is done before the kernel starts) is the fix.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void reduce_atomic(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x, stride = gridDim.x * BLOCK;
    float sum = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + tid; i < count; i += stride) sum += in[i];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, partial[0]);  // BUG: adds to a value never set to zero
}

extern "C" void solve(const float* input, float* output, int N) {
    unsigned needed = ((unsigned)N - 1) / BLOCK + 1;
    unsigned blocks = needed < 1024 ? needed : 1024;
    reduce_atomic<<<blocks, BLOCK>>>(input, output, (unsigned)N);
}
