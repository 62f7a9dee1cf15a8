// Approach: one launch over a grid sized to the GPU; each thread walks predictions and targets a grid's
// width at a time with two float4 loads of each in flight, adds the four squared differences of a float4
// pair in float and the result into a double; warp shuffles sum the block in double, and the last block to
// finish (an atomic ticket) adds the blocks' sums in block order and writes the sum / N to mse[0]: the same
// bits every call, no atomic on the sum.
#include <cstdint>
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;        // threads per block: a multiple of 32
constexpr unsigned BLOCKS_PER_SM = 8;  // 8 × 256 = 2048 threads, a full H100/H200 multiprocessor
constexpr unsigned IN_FLIGHT = 2;      // float4 pairs a thread loads before using any (four loads)
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ unsigned blocks_done = 0;  // blocks of the current call that have written their sum

__device__ double warp_sum(double v) {
    for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_down_sync(FULL_MASK, v, k);
    return v;
}

// The block's sum of v, in thread 0. Every thread of the block calls it.
__device__ double block_sum(double v) {
    __shared__ double warp_sums[BLOCK / 32];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = warp == 0 ? warp_sum(lane < BLOCK / 32 ? warp_sums[lane] : 0.0) : 0.0;
    __syncthreads();  // warp_sums may be written again by this block's next block_sum
    return v;
}

__device__ __forceinline__ float square_diff(float p, float t) {
    float d = p - t;
    return d * d;
}

__device__ __forceinline__ float quad_squares(float4 p, float4 t) {
    return (square_diff(p.x, t.x) + square_diff(p.y, t.y)) + (square_diff(p.z, t.z) + square_diff(p.w, t.w));
}

// This thread's share of the squared differences: float4 pairs (when aligned) IN_FLIGHT at a time, then
// the rest.
template <bool FLOAT4>
__device__ double thread_squares(const float* P, const float* T, unsigned count) {
    unsigned first = blockIdx.x * BLOCK + threadIdx.x, stride = gridDim.x * BLOCK;
    double acc = 0.0;
    if (FLOAT4) {
        const float4* p4 = reinterpret_cast<const float4*>(P);
        const float4* t4 = reinterpret_cast<const float4*>(T);
        unsigned quads = count / 4, i = first;
        // Unsigned: quads < 2^29 and IN_FLIGHT · stride < 2^22, so nothing wraps.
        for (; i + (IN_FLIGHT - 1) * stride < quads; i += IN_FLIGHT * stride) {
            float4 p[IN_FLIGHT], t[IN_FLIGHT];
#pragma unroll
            for (unsigned u = 0; u < IN_FLIGHT; ++u) {
                p[u] = p4[i + u * stride];
                t[u] = t4[i + u * stride];
            }
#pragma unroll
            for (unsigned u = 0; u < IN_FLIGHT; ++u) acc += quad_squares(p[u], t[u]);
        }
        for (; i < quads; i += stride) acc += quad_squares(p4[i], t4[i]);
        unsigned tail = 4 * quads + first;  // thread t < count % 4 takes element 4·(count / 4) + t
        if (tail < count) acc += square_diff(P[tail], T[tail]);
    } else {
        for (unsigned i = first; i < count; i += stride) acc += square_diff(P[i], T[i]);
    }
    return acc;
}

template <bool FLOAT4>
__global__ void __launch_bounds__(BLOCK)
mse_once(const float* P, const float* T, double* partial, float* out, unsigned count) {
    double n = (double)count;
    double sum = block_sum(thread_squares<FLOAT4>(P, T, count));
    if (gridDim.x == 1) {  // a single block needs no partial sums
        if (threadIdx.x == 0) out[0] = (float)(sum / n);
        return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sum;
        __threadfence();  // the partial sum is visible to every block before the ticket says so
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();  // the other blocks' partial sums are read after their tickets
    double total = 0.0;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) total += __ldcg(partial + b);  // from L2
    total = block_sum(total);
    if (threadIdx.x == 0) {
        out[0] = (float)(total / n);
        blocks_done = 0;  // every block has counted: ready for the next call
    }
}

static unsigned full_grid() {
    static unsigned blocks = 0;  // 0: not asked yet; the GPU cannot change while the process runs
    if (blocks == 0) {
        int device = 0, multiprocessors = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
        blocks = (multiprocessors > 0 ? multiprocessors : 1) * BLOCKS_PER_SM;
    }
    return blocks;
}

// The blocks' partial sums: full_grid() doubles, allocated by the first call and kept for the next ones.
static double* scratch = nullptr;

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* predictions, const float* targets, float* mse, int N) {
    if (N <= 0) return;
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / (4 * BLOCK) + 1;  // each thread takes at least a float4
    unsigned blocks = needed < full_grid() ? needed : full_grid();
    if (blocks > 1 && scratch == nullptr && cudaMalloc(&scratch, full_grid() * sizeof(double)) != cudaSuccess) {
        scratch = nullptr;
        return;  // out of memory: the error stays for the caller to read
    }
    if (aligned16(predictions) && aligned16(targets))
        mse_once<true><<<blocks, BLOCK>>>(predictions, targets, scratch, mse, count);
    else
        mse_once<false><<<blocks, BLOCK>>>(predictions, targets, scratch, mse, count);
}
