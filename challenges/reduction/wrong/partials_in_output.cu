// expect: OUT_OF_BOUNDS
// expect-message: past its end
// Each block writes its partial sum to output[blockIdx.x], and a second launch adds those up in
// place: as if output had room for one float per block. It has room for one float. From N = 257 on
// there are two blocks or more, and the writes land past the end of output, in memory that belongs to
// someone else (here, the grader's guard, which notices).
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

__global__ void reduce_into(const float* in, float* out, unsigned count) {
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
    if (tid == 0) out[blockIdx.x] = partial[0];
}

extern "C" void solve(const float* input, float* output, int N) {
    unsigned needed = ((unsigned)N - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    reduce_into<<<blocks, BLOCK>>>(input, output, (unsigned)N);  // BUG: output[1 .. blocks - 1] do not exist
    if (blocks > 1) reduce_into<<<1, BLOCK>>>(output, output, blocks);
}
