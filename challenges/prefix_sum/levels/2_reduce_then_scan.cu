// expect: ACCEPTED
// Level 2 — reduce, then scan: eight elements per thread, warp shuffles, three launches.
//
// Over level 1, three changes:
// - Each thread owns eight consecutive elements and adds them one after another in registers: a tile of
//   256 threads covers 2,048 elements, and only the threads' 256 totals need a parallel scan. That scan
//   runs in registers: __shfl_up_sync(mask, v, d) hands lane l the value of lane l - d, so five steps
//   (d = 1, 2, 4, 8, 16) scan each warp's 32 totals Kogge-Stone style with no shared memory and no
//   barrier; warp 0 then scans the eight warps' totals the same way. Two barriers per 2,048 elements
//   where level 1 had eight per 256.
// - Reduce first, scan second, so the output is written once. Pass 1 only adds up each tile (reading
//   the input once, writing one float per tile); pass 2, one block, scans those tile sums; pass 3 reads
//   each tile again and writes its scan offset by the sum of the tiles before it. 12 bytes move per
//   element (two reads, one write) where level 1 moved 16 (read, write, then read and write again to
//   add the block offsets), and three launches at every size where level 1 needed 2 · levels - 1
//   (5 at 250,000 elements and at 2^24, 7 at 2^25 + 1,025). One launch when the input fits in a tile.
// - Loads and stores stay coalesced: a tile passes through shared memory, read from global memory with
//   thread t taking elements t, t + 256, t + 512 .., then read back by each thread as its eight
//   consecutive elements (and the other way round for the store). The shared array is padded by one
//   float every 32, so that the eight-apart reads of a warp fall in 32 different banks.
// Expected: about 16/12 of level 1's speed at 2^24 and above from the traffic alone, more from the
// barriers and launches saved. Each call adds in the same order and returns the same bits.
#include <cuda_runtime.h>

constexpr unsigned THREADS = 256;                // threads per block, a multiple of 32
constexpr unsigned ITEMS = 8;                    // consecutive elements per thread
constexpr unsigned TILE = THREADS * ITEMS;       // elements per block: 2,048
constexpr unsigned WARPS = THREADS / 32;         // 8: scanned by warp 0's first lanes
constexpr unsigned PADDED = TILE + TILE / 32;    // the staging array, one float of padding every 32
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ unsigned padded(unsigned j) { return j + j / 32; }

// Loads in[base .. base + TILE) (zeros at and past count) so that thread t holds elements
// base + 8t .. base + 8t + 7 in items[]. Every thread of the block must call it.
__device__ void load_tile(const float* in, unsigned base, unsigned count, float* staging, float (&items)[ITEMS]) {
    unsigned tid = threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) {
        unsigned j = k * THREADS + tid;  // consecutive threads, consecutive addresses: coalesced
        staging[padded(j)] = base + j < count ? in[base + j] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) items[k] = staging[padded(tid * ITEMS + k)];
    __syncthreads();  // every thread has its items before staging is written again
}

// The way back: thread t's items[] to out[base + 8t ..], below count only.
__device__ void store_tile(float* out, unsigned base, unsigned count, float* staging, const float (&items)[ITEMS]) {
    unsigned tid = threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) staging[padded(tid * ITEMS + k)] = items[k];
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) {
        unsigned j = k * THREADS + tid;
        if (base + j < count) out[base + j] = staging[padded(j)];
    }
    __syncthreads();  // staging is read before the next tile overwrites it
}

// Scans the block's 2,048 items: afterwards items[k] is the sum of the thread's items 0 .. k, and the
// return value is the thread's offset, the sum of every item of the threads before it; *tile_total is
// the sum of all 2,048. Every thread of the block must call it.
__device__ float scan_tile(float (&items)[ITEMS], float* tile_total) {
    __shared__ float warp_offsets[WARPS];
    __shared__ float total;
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (unsigned k = 1; k < ITEMS; ++k) items[k] += items[k - 1];
    float running = items[ITEMS - 1];  // this thread's total, then the warp's inclusive scan of them
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
        float left = __shfl_up_sync(FULL_MASK, running, d);
        if (lane >= d) running += left;
    }
    float lane_offset = __shfl_up_sync(FULL_MASK, running, 1);  // the lanes before this one
    if (lane == 0) lane_offset = 0.0f;
    if (lane == 31) warp_offsets[warp] = running;  // the warp's total
    __syncthreads();
    if (warp == 0) {
        float warp_running = lane < WARPS ? warp_offsets[lane] : 0.0f;
#pragma unroll
        for (unsigned d = 1; d < WARPS; d *= 2) {
            float left = __shfl_up_sync(FULL_MASK, warp_running, d);
            if (lane >= d) warp_running += left;
        }
        float before = __shfl_up_sync(FULL_MASK, warp_running, 1);
        if (lane < WARPS) warp_offsets[lane] = lane == 0 ? 0.0f : before;  // each lane read its own slot above
        if (lane == WARPS - 1) total = warp_running;
    }
    __syncthreads();
    *tile_total = total;
    return warp_offsets[warp] + lane_offset;
}

// Pass 1: sums[b] = the sum of tile b. Each thread adds its elements t, t + 256 .. (coalesced; the order
// of a sum does not matter here), then a shuffle tree per warp and one over the eight warps' sums.
__global__ void tile_sums(const float* in, float* sums, unsigned count) {
    __shared__ float warp_sums[WARPS];
    unsigned tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    unsigned base = blockIdx.x * TILE;
    float sum = 0.0f;
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) {
        unsigned i = base + k * THREADS + tid;
        if (i < count) sum += in[i];
    }
    for (unsigned offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(FULL_MASK, sum, offset);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < WARPS ? warp_sums[lane] : 0.0f;
        for (unsigned offset = WARPS / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(FULL_MASK, sum, offset);
        if (lane == 0) sums[blockIdx.x] = sum;
    }
}

// Pass 2, one block: the inclusive scan of sums[0 .. tiles), in place, 2,048 at a time, each chunk
// offset by the total of the chunks before it.
__global__ void scan_tile_sums(float* sums, unsigned tiles) {
    __shared__ float staging[PADDED];
    float carry = 0.0f;
    for (unsigned base = 0; base < tiles; base += TILE) {
        float items[ITEMS], chunk_total;
        load_tile(sums, base, tiles, staging, items);
        float offset = carry + scan_tile(items, &chunk_total);
#pragma unroll
        for (unsigned k = 0; k < ITEMS; ++k) items[k] = offset + items[k];
        store_tile(sums, base, tiles, staging, items);
        carry += chunk_total;
    }
}

// Pass 3: tile b's scan, offset by scanned_sums[b - 1], the sum of every tile before it (none for b = 0,
// and none when scanned_sums is null: a single tile).
__global__ void scan_tiles(const float* in, float* out, const float* scanned_sums, unsigned count) {
    __shared__ float staging[PADDED];
    unsigned base = blockIdx.x * TILE;
    float items[ITEMS], tile_total;
    load_tile(in, base, count, staging, items);
    float before = blockIdx.x > 0 ? scanned_sums[blockIdx.x - 1] : 0.0f;
    float offset = before + scan_tile(items, &tile_total);
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) items[k] = offset + items[k];
    store_tile(out, base, count, staging, items);
}

// One float per tile. Allocated by the first call that needs it and grown when a larger N needs more;
// the buffer it replaces is freed. The last one is kept for the next calls (freeing it in every call
// would cost a cudaMalloc, and cudaFree's device synchronization, in every call) and goes with the
// process.
static float* scratch = nullptr;
static size_t scratch_floats = 0;

static float* scratch_of(size_t floats) {
    if (floats > scratch_floats) {
        // cudaFree waits for kernels still using the old buffer; nullptr is a no-op.
        if (cudaFree(scratch) != cudaSuccess) return nullptr;
        scratch = nullptr;
        scratch_floats = 0;
        if (cudaMalloc(&scratch, floats * sizeof(float)) != cudaSuccess) return nullptr;
        scratch_floats = floats;
    }
    return scratch;
}

// Every launch is checked; a failure leaves outputs unwritten (the grader's NaN), which the check reports.
static cudaError_t scan(const float* input, float* output, unsigned count) {
    unsigned tiles = (count - 1) / TILE + 1;
    if (tiles == 1) {
        scan_tiles<<<1, THREADS>>>(input, output, nullptr, count);
        return cudaGetLastError();
    }
    float* sums = scratch_of(tiles);
    if (sums == nullptr) return cudaErrorMemoryAllocation;
    tile_sums<<<tiles, THREADS>>>(input, sums, count);
    cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess) return status;
    scan_tile_sums<<<1, THREADS>>>(sums, tiles);
    status = cudaGetLastError();
    if (status != cudaSuccess) return status;
    scan_tiles<<<tiles, THREADS>>>(input, output, sums, count);
    return cudaGetLastError();
}

extern "C" void solve(const float* input, float* output, int N) {
    if (N <= 0) return;
    scan(input, output, (unsigned)N);  // an error leaves outputs unwritten: nothing else to undo
}
