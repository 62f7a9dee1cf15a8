// Approach: one pass, decoupled look-back (Merrill and Garland): each block takes a ticket for its tile of
// 2,048 elements (tiles in the order blocks start, so no block waits on one that has not started), scans
// it in registers and warp shuffles, publishes its total, reads its predecessors' published totals or
// prefixes until it meets a prefix, and writes its outputs; loads and stores go through shared memory so
// both are coalesced. From this project's challenges/prefix_sum/levels/3_decoupled_lookback.cu.
#include <cstdint>
#include <cuda_runtime.h>

constexpr unsigned THREADS = 256;              // threads per block, a multiple of 32
constexpr unsigned ITEMS = 8;                  // consecutive elements per thread: two float4
constexpr unsigned TILE = THREADS * ITEMS;     // elements per tile: 2,048
constexpr unsigned WARPS = THREADS / 32;
constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr unsigned LAST_EPOCH = 0x7fffffffu;   // tags are 2 · epoch + kind, in 32 bits
constexpr unsigned PADDED = TILE + TILE / 32;  // the staging array, one float of padding every 32

__device__ __forceinline__ unsigned padded(unsigned j) { return j + j / 32; }

// A descriptor's tag: 2 · epoch for an aggregate, 2 · epoch + 1 for an inclusive prefix; 0 (how the state
// starts) and any other call's tags mean that the tile has published nothing in this call.
__device__ __forceinline__ unsigned long long descriptor(unsigned tag, float value) {
    return (unsigned long long)tag << 32 | __float_as_uint(value);
}

__device__ __forceinline__ void publish(unsigned long long* slot, unsigned tag, float value) {
    *(volatile unsigned long long*)slot = descriptor(tag, value);
}

// Warp 0 of tile `tile` > 0: the sum of every element before the tile. Every lane returns it.
__device__ float look_back(const unsigned long long* descriptors, unsigned tile, unsigned epoch) {
    unsigned lane = threadIdx.x % 32;
    float exclusive = 0.0f;
    for (long long nearest = (long long)tile - 1;; nearest -= 32) {  // the predecessor lane 0 reads
        long long predecessor = nearest - lane;
        unsigned long long word = descriptor(2 * epoch + 1, 0.0f);  // before tile 0: nothing, summed as 0
        if (predecessor >= 0) {
            do {  // volatile: read again from memory every time, until this call's tile has published
                word = *(const volatile unsigned long long*)(descriptors + predecessor);
            } while ((unsigned)(word >> 32) >> 1 != epoch);
        }
        unsigned prefixes = __ballot_sync(FULL_MASK, (unsigned)(word >> 32) == 2 * epoch + 1);
        // Lanes up to the nearest tile with an inclusive prefix count; those past it would count twice.
        unsigned stop = prefixes != 0 ? __ffs(prefixes) - 1 : 31;
        float value = lane <= stop ? __uint_as_float((unsigned)word) : 0.0f;
        for (unsigned mask = 16; mask > 0; mask /= 2) value += __shfl_xor_sync(FULL_MASK, value, mask);
        exclusive += value;  // this window's sum, the same in every lane
        if (prefixes != 0) return exclusive;
    }
}

// Scans the block's 2,048 items: afterwards items[k] is the sum of the thread's items
// 0 .. k, and the return value is the sum of every item of the threads before it; *tile_total is the
// sum of all 2,048. Every thread of the block must call it.
__device__ float scan_tile(float (&items)[ITEMS], float* tile_total) {
    __shared__ float warp_offsets[WARPS];
    __shared__ float total;
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (unsigned k = 1; k < ITEMS; ++k) items[k] += items[k - 1];
    float running = items[ITEMS - 1];
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
        float left = __shfl_up_sync(FULL_MASK, running, d);
        if (lane >= d) running += left;
    }
    float lane_offset = __shfl_up_sync(FULL_MASK, running, 1);
    if (lane == 0) lane_offset = 0.0f;
    if (lane == 31) warp_offsets[warp] = running;
    __syncthreads();
    if (warp == 0) {
        float warp_running = lane < WARPS ? warp_offsets[lane] : 0.0f;
#pragma unroll
        for (unsigned d = 1; d < WARPS; d *= 2) {
            float left = __shfl_up_sync(FULL_MASK, warp_running, d);
            if (lane >= d) warp_running += left;
        }
        float before = __shfl_up_sync(FULL_MASK, warp_running, 1);
        if (lane < WARPS) warp_offsets[lane] = lane == 0 ? 0.0f : before;
        if (lane == WARPS - 1) total = warp_running;
    }
    __syncthreads();
    *tile_total = total;
    return warp_offsets[warp] + lane_offset;
}

// Loads in[base .. base + TILE) (zeros at and past count) so that thread t holds elements base + 8t ..
// base + 8t + 7 in items[]: read from global memory with consecutive threads on consecutive addresses
// (coalesced), then each thread's eight from shared memory (padded: the eight-apart reads of a warp fall
// in 32 banks). Every thread of the block must call it.
__device__ void load_tile(const float* in, unsigned base, unsigned count, float* staging, float (&items)[ITEMS]) {
    unsigned tid = threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) {
        unsigned j = k * THREADS + tid;
        staging[padded(j)] = base + j < count ? in[base + j] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) items[k] = staging[padded(tid * ITEMS + k)];
    __syncthreads();  // every thread has its items before staging is written again
}

// The way back: thread t's items[] to out[base + 8t ..], below count only, coalesced through staging.
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
}

// state[0] counts tickets; state[1 + t] is tile t's descriptor. first_ticket: the tickets earlier calls drew.
__global__ void scan_single_pass(const float* in, float* out, unsigned count, unsigned long long* state,
                                 unsigned long long first_ticket, unsigned epoch) {
    __shared__ float staging[PADDED];
    __shared__ unsigned shared_tile;
    __shared__ float shared_exclusive;
    unsigned tid = threadIdx.x;
    if (tid == 0) shared_tile = (unsigned)(atomicAdd(state, 1ull) - first_ticket);
    __syncthreads();
    unsigned tile = shared_tile;
    unsigned long long* descriptors = state + 1;
    unsigned base = tile * TILE;  // unsigned: below count + 2,047, under 2^32
    float items[ITEMS];
    load_tile(in, base, count, staging, items);
    float aggregate;
    float offset = scan_tile(items, &aggregate);
    if (tid == 0) publish(descriptors + tile, 2 * epoch + (tile == 0), aggregate);  // tile 0's is a prefix
    if (tid < 32) {
        float exclusive = tile > 0 ? look_back(descriptors, tile, epoch) : 0.0f;
        if (tid == 0) {
            if (tile > 0) publish(descriptors + tile, 2 * epoch + 1, exclusive + aggregate);
            shared_exclusive = exclusive;
        }
    }
    __syncthreads();
    offset = shared_exclusive + offset;
#pragma unroll
    for (unsigned k = 0; k < ITEMS; ++k) items[k] = offset + items[k];
    store_tile(out, base, count, staging, items);
}

// The look-back state: the ticket counter and one descriptor per tile. Allocated (and zeroed) by the
// first call and again when a larger N needs more tiles; the buffer it replaces is freed. The last one
// is kept for the next calls and goes with the process.
static unsigned long long* state = nullptr;
static size_t state_tiles = 0;
static unsigned long long tickets_drawn = 0;  // what state[0] holds between calls
static unsigned epoch = 0;                    // the last call's; 0 is never a call's

static cudaError_t prepare_state(size_t tiles) {
    if (tiles > state_tiles) {
        // cudaFree waits for kernels still using the old buffer; nullptr is a no-op.
        cudaError_t status = cudaFree(state);
        state = nullptr;
        state_tiles = 0;
        if (status != cudaSuccess) return status;
        status = cudaMalloc(&state, (1 + tiles) * sizeof(unsigned long long));
        if (status != cudaSuccess) {
            state = nullptr;
            return status;
        }
        epoch = LAST_EPOCH;  // zero it below
        state_tiles = tiles;
    }
    if (epoch == LAST_EPOCH) {  // new memory, or the epochs ran out (after 2^31 calls): start again from 0
        cudaError_t status = cudaMemset(state, 0, (1 + state_tiles) * sizeof(unsigned long long));
        if (status != cudaSuccess) return status;
        tickets_drawn = 0;
        epoch = 0;
    }
    return cudaSuccess;
}

extern "C" void solve(const float* input, float* output, int N) {
    if (N <= 0) return;
    unsigned count = (unsigned)N;
    unsigned tiles = (count - 1) / TILE + 1;
    if (prepare_state(tiles) != cudaSuccess) return;  // output stays unwritten, and the check says so
    ++epoch;
    scan_single_pass<<<tiles, THREADS>>>(input, output, count, state, tickets_drawn, epoch);
    // Peek, not get: the launch's error stays for the caller to read.
    if (cudaPeekAtLastError() != cudaSuccess) {
        epoch = LAST_EPOCH;  // the kernel did not run: count nothing, and zero the state next call
        return;
    }
    tickets_drawn += tiles;  // every block draws one ticket
}
