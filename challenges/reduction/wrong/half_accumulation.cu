// expect: WRONG_ANSWER
// expect-message: reduced-precision
// Each thread's running sum and the block's tree kept in half precision (__hadd), to halve the shared
// memory and use the FP16 units. Half keeps 11 significant bits where float keeps 24: the inputs lose
// 13 bits as they are converted, and every addition rounds to 11 bits again. Already at N = 1 the
// result is off by up to 2^-12 of the value, about 240 times the allowed error (statement.md,
// "Accuracy"). The partial sums between the passes are stored as float, which does not help: they were
// rounded to half when they were made.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 1024;

__global__ void reduce_half(const float* in, float* out, unsigned count) {
    __shared__ __half partial[BLOCK];
    unsigned tid = threadIdx.x, stride = gridDim.x * BLOCK;
    __half sum = __float2half(0.0f);
    for (unsigned i = blockIdx.x * BLOCK + tid; i < count; i += stride)
        sum = __hadd(sum, __float2half(in[i]));  // BUG: FP16 arithmetic
    partial[tid] = sum;
    __syncthreads();
    for (unsigned s = BLOCK / 2; s > 0; s >>= 1) {
        if (tid < s) partial[tid] = __hadd(partial[tid], partial[tid + s]);
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = __half2float(partial[0]);
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned needed = ((unsigned)N - 1) / BLOCK + 1;
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (blocks == 1) {
        reduce_half<<<1, BLOCK>>>(input, output, (unsigned)N);
        return;
    }
    if (scratch == nullptr) cudaMalloc(&scratch, MAX_BLOCKS * sizeof(float));
    reduce_half<<<blocks, BLOCK>>>(input, scratch, (unsigned)N);
    reduce_half<<<1, BLOCK>>>(scratch, output, blocks);
}
