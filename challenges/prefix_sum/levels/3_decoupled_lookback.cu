// expect: ACCEPTED
// Level 3 — one pass: decoupled look-back (Merrill and Garland's single-pass scan).
//
// Level 2 reads the input twice because a tile cannot start its scan's second half before it knows the
// sum of every tile before it. Here each tile learns that sum from its predecessors while the kernel
// runs, so the input is read once and the output written once: 8 bytes per element where level 2
// moved 12, in one launch where it needed three. Per tile of 2,048 elements:
//   1. thread 0 takes a ticket (atomicAdd on a counter) and the block scans the ticket's tile: tiles are
//      handed out in the order blocks start, not by blockIdx.x, because a block waits for the tiles
//      before its own, and CUDA does not promise that block 5 starts before block 900 does: a block
//      that waited for a tile no running block has taken could wait for ever;
//   2. it publishes its aggregate (the sum of its own 2,048 elements), then warp 0 looks back: lane l
//      reads the descriptor of tile t - 1 - l, waiting until that tile has published something. It
//      adds up, nearest first, the published values back to the nearest tile that has published an
//      inclusive prefix (the sum of everything up to its end), 32 tiles per step;
//   3. the tile publishes its own inclusive prefix (that sum plus its aggregate), so that the tiles
//      after it rarely look back further than a few tiles, and writes its outputs.
// A descriptor is one 64-bit word: the value's 32 bits and a 32-bit tag saying what it is and from
// which call. One volatile store publishes both halves at once, and one volatile load reads them, so no
// reader can see a new flag beside an old value and no fence is needed.
// Nothing is cleared between calls: every call has a new epoch number, and a tag from an older call
// reads as "nothing published yet"; the ticket counter keeps counting, and the host subtracts the
// tickets earlier calls drew. The state is zeroed once, when it is allocated.
// Loads and stores are coalesced through shared memory, as in level 2. (A first version loaded each
// thread's eight consecutive elements straight from global memory as two float4: every load and store
// instruction of a warp then touched 32 addresses 32 bytes apart, and on an H200 it moved its 8 bytes
// per element at 1.85 TB/s, slower than level 2's 12 at 3.4 TB/s; sleeping between the look-back's
// polls, or tiles of 4,096, changed nothing. Staged, as below: bench/results/2026-11-26-issue21-h200.)
// Expected: about 12/8 of level 2's speed at 2^24 and above (its traffic), and at LeetGPU's 250,000
// elements one launch instead of three, which at that size (1 MB each way, under a microsecond of
// memory time on an H100) is most of the difference. Measured on an H200: 1.6x level 2 at 250,000, but
// 0.89x at 2^24 and 2^25 + 1,025 (2.05 TB/s where level 2 moves its 12 bytes at 3.4): the chain of
// look-backs, each tile waiting on the ones before it, sets the pace there, not the bytes. The sums are those of level 2, tile by tile; only the
// tiles' offsets depend on how far each look-back had to go, which timing decides, so the last bits of
// an output can change from one call to the next (every such order is within the tolerance:
// statement.md, "Accuracy").
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

// Scans the block's 2,048 items, as level 2 does: afterwards items[k] is the sum of the thread's items
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
// in 32 banks), as level 2 does. Every thread of the block must call it.
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
    if (cudaGetLastError() != cudaSuccess) {
        epoch = LAST_EPOCH;  // the kernel did not run: count nothing, and zero the state next call
        return;
    }
    tickets_drawn += tiles;  // every block draws one ticket
}
