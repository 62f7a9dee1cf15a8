// expect: RACE
// expect-message: __syncthreads
// backends: emulator
// The tree without the __syncthreads() between its steps: a thread reads partial[tid + s] whether or
// not the thread that owns it has finished the previous step. On a GPU the outcome depends on how the
// warps happen to be scheduled (in the last steps, within one warp, it often comes out right, which is
// what makes the bug hard to see), so only the emulator promises a verdict: it runs every block's
// threads in forward and in reverse order. Forward, thread 0 finishes its whole loop before any other
// thread starts and adds values that are not sums yet; reversed, every thread finds its neighbour
// done. Two different answers from one input: a race.
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

__global__ void reduce_racy(const float* in, float* out, unsigned count) {
    __shared__ float partial[BLOCK];
    unsigned tid = threadIdx.x, stride = gridDim.x * BLOCK;
    float sum = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + tid; i < count; i += stride) sum += in[i];
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] += partial[tid + s];
        // BUG: the __syncthreads() that belongs here is missing
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    constexpr unsigned MAX_BLOCKS = 1024;
    unsigned needed = ((unsigned)N - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (blocks == 1) {
        reduce_racy<<<1, BLOCK>>>(input, output, (unsigned)N);
        return;
    }
    if (scratch == nullptr) cudaMalloc(&scratch, MAX_BLOCKS * sizeof(float));
    reduce_racy<<<blocks, BLOCK>>>(input, scratch, (unsigned)N);
    reduce_racy<<<1, BLOCK>>>(scratch, output, blocks);
}
