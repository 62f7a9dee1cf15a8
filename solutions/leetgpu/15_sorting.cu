// Approach: LSD radix sort, four passes of 8 bits, on the floats' bits mapped to unsigned keys that order as
// the floats do (negatives inverted, positives with the sign bit set; every NaN made the largest key, so NaNs
// end last as in torch.sort). Each pass: (1) every tile of 4,096 keys counts its digits in shared memory;
// (2) one block per digit turns that digit's counts into each tile's exclusive offset across tiles; (3)
// every tile ranks its keys stably (rounds of 256 keys in input order; within a round, warp by warp, the
// lanes sharing a digit found with eight ballots) and writes each key to digit start + tile offset + rank.
// The first pass reads the floats and the last writes them back, through two scratch key buffers.
#include <cuda_runtime.h>

constexpr unsigned THREADS = 256;            // threads per block: 8 warps
constexpr unsigned WARPS = THREADS / 32;
constexpr unsigned ROUNDS = 16;              // keys per thread in a tile
constexpr unsigned TILE = THREADS * ROUNDS;  // 4,096 keys
constexpr unsigned RADIX_BITS = 8;
constexpr unsigned DIGITS = 1u << RADIX_BITS;  // 256, one per thread in the per-digit steps
constexpr unsigned PASSES = 32 / RADIX_BITS;
constexpr unsigned FULL_MASK = 0xffffffffu;
static_assert(DIGITS == THREADS, "the per-digit steps give each thread one digit");

// A float's bits as a key whose unsigned order is the float order (-0 just before +0); NaN is the largest.
__device__ __forceinline__ unsigned to_key(float x) {
    unsigned bits = __float_as_uint(x);
    if (x != x) return FULL_MASK;
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

// The inverse of to_key (FULL_MASK comes back as a NaN).
__device__ __forceinline__ float from_key(unsigned key) {
    return __uint_as_float(key & 0x80000000u ? key ^ 0x80000000u : ~key);
}

// Key i of a pass's input: the first pass reads the caller's floats, the others a scratch key buffer.
template <bool FIRST>
__device__ __forceinline__ unsigned load_key(const void* src, unsigned i) {
    if (FIRST) return to_key(static_cast<const float*>(src)[i]);
    return static_cast<const unsigned*>(src)[i];
}

// Step 1: counts[d · tiles + t] = how many keys of tile t have digit d.
template <bool FIRST>
__global__ void __launch_bounds__(THREADS)
count_digits(const void* src, unsigned* counts, unsigned count, unsigned tiles, unsigned shift) {
    __shared__ unsigned histogram[DIGITS];
    histogram[threadIdx.x] = 0;
    __syncthreads();
    unsigned base = blockIdx.x * TILE;
    for (unsigned r = 0; r < ROUNDS; ++r) {
        unsigned i = base + r * THREADS + threadIdx.x;  // coalesced
        if (i < count) atomicAdd(&histogram[(load_key<FIRST>(src, i) >> shift) & (DIGITS - 1)], 1u);
    }
    __syncthreads();
    counts[threadIdx.x * tiles + blockIdx.x] = histogram[threadIdx.x];
}

// Inclusive scan of v over the block (every thread gets its own prefix); total gets the block's sum.
__device__ unsigned block_inclusive_scan(unsigned v, unsigned* total) {
    __shared__ unsigned warp_sums[WARPS];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (unsigned d = 1; d < 32; d *= 2) {
        unsigned left = __shfl_up_sync(FULL_MASK, v, d);
        if (lane >= d) v += left;
    }
    if (lane == 31) warp_sums[warp] = v;
    __syncthreads();
    unsigned before = 0, all = 0;
    for (unsigned w = 0; w < WARPS; ++w) {
        unsigned s = warp_sums[w];
        if (w < warp) before += s;
        all += s;
    }
    __syncthreads();  // warp_sums may be written again by the next call
    *total = all;
    return before + v;
}

// Step 2: block d turns row d of counts into exclusive offsets across tiles, and writes the row's total.
__global__ void __launch_bounds__(THREADS) scan_digit_rows(unsigned* counts, unsigned* digit_totals, unsigned tiles) {
    unsigned* row = counts + blockIdx.x * tiles;
    unsigned carry = 0;
    for (unsigned start = 0; start < tiles; start += THREADS) {  // uniform across the block
        unsigned t = start + threadIdx.x;
        unsigned v = t < tiles ? row[t] : 0, chunk = 0;
        unsigned inclusive = block_inclusive_scan(v, &chunk);
        if (t < tiles) row[t] = carry + inclusive - v;
        carry += chunk;
    }
    if (threadIdx.x == 0) digit_totals[blockIdx.x] = carry;
}

// Step 3: every key of tile blockIdx.x to its place. Round r ranks keys r·256 .. r·256 + 255 of the tile,
// so rounds, then warps, then lanes follow the input order: the pass is stable, as LSD radix sort needs.
template <bool FIRST, bool LAST>
__global__ void __launch_bounds__(THREADS)
scatter_keys(const void* src, void* dst, const unsigned* counts, const unsigned* digit_totals, unsigned count,
             unsigned tiles, unsigned shift) {
    __shared__ unsigned next[DIGITS];                // where the next key of digit d goes
    __shared__ unsigned warp_counts[WARPS][DIGITS];  // this round: keys of digit d in warp w
    __shared__ unsigned warp_starts[WARPS][DIGITS];  // this round: where warp w's first key of digit d goes
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, digit_of_thread = threadIdx.x;

    unsigned total = 0;
    unsigned before = block_inclusive_scan(digit_totals[digit_of_thread], &total) - digit_totals[digit_of_thread];
    next[digit_of_thread] = before + counts[digit_of_thread * tiles + blockIdx.x];
    for (unsigned w = 0; w < WARPS; ++w) warp_counts[w][digit_of_thread] = 0;
    __syncthreads();

    unsigned lanes_before = (1u << lane) - 1;
    unsigned base = blockIdx.x * TILE;
    for (unsigned r = 0; r < ROUNDS; ++r) {
        unsigned i = base + r * THREADS + threadIdx.x;
        bool valid = i < count;
        unsigned key = valid ? load_key<FIRST>(src, i) : 0;
        unsigned digit = (key >> shift) & (DIGITS - 1);
        unsigned peers = __ballot_sync(FULL_MASK, valid);  // the lanes with the same digit, eight bits at a time
#pragma unroll
        for (unsigned b = 0; b < RADIX_BITS; ++b) {
            unsigned ones = __ballot_sync(FULL_MASK, (digit >> b) & 1);
            peers &= (digit >> b) & 1 ? ones : ~ones;
        }
        if (valid && (peers & lanes_before) == 0) warp_counts[warp][digit] = __popc(peers);  // the lowest peer
        __syncthreads();
        unsigned run = next[digit_of_thread];  // thread d: digit d's places for this round, warp by warp
        for (unsigned w = 0; w < WARPS; ++w) {
            warp_starts[w][digit_of_thread] = run;
            run += warp_counts[w][digit_of_thread];
            warp_counts[w][digit_of_thread] = 0;  // ready for the next round
        }
        next[digit_of_thread] = run;
        __syncthreads();
        if (valid) {
            unsigned place = warp_starts[warp][digit] + __popc(peers & lanes_before);
            if (LAST) static_cast<float*>(dst)[place] = from_key(key);
            else static_cast<unsigned*>(dst)[place] = key;
        }
    }
}

// Scratch for the passes: two key buffers of `capacity` keys, the counts (DIGITS per tile) and the digit
// totals. Allocated by the first call, grown (the old one freed) when a call needs more, kept otherwise.
struct Scratch {
    unsigned* keys[2] = {nullptr, nullptr};
    unsigned* counts = nullptr;
    unsigned* digit_totals = nullptr;
    size_t capacity = 0;
};
static Scratch scratch;

static void release(Scratch& s) {
    cudaFree(s.keys[0]);
    cudaFree(s.keys[1]);
    cudaFree(s.counts);
    cudaFree(s.digit_totals);
    s = Scratch{};
}

static bool reserve(Scratch& s, unsigned count, unsigned tiles) {
    if (count <= s.capacity) return true;
    release(s);
    size_t keys = (size_t)tiles * TILE;
    if (cudaMalloc(&s.keys[0], keys * sizeof(unsigned)) != cudaSuccess ||
        cudaMalloc(&s.keys[1], keys * sizeof(unsigned)) != cudaSuccess ||
        cudaMalloc(&s.counts, (size_t)DIGITS * tiles * sizeof(unsigned)) != cudaSuccess ||
        cudaMalloc(&s.digit_totals, DIGITS * sizeof(unsigned)) != cudaSuccess) {
        release(s);
        return false;
    }
    s.capacity = keys;
    return true;
}

// One pass from src to dst on the digit at `shift`.
template <bool FIRST, bool LAST>
static void pass(const void* src, void* dst, unsigned count, unsigned tiles, unsigned shift) {
    count_digits<FIRST><<<tiles, THREADS>>>(src, scratch.counts, count, tiles, shift);
    scan_digit_rows<<<DIGITS, THREADS>>>(scratch.counts, scratch.digit_totals, tiles);
    scatter_keys<FIRST, LAST><<<tiles, THREADS>>>(src, dst, scratch.counts, scratch.digit_totals, count, tiles, shift);
}

extern "C" void solve(float* data, int N) {
    if (N < 2) return;  // already sorted
    unsigned count = (unsigned)N, tiles = (count - 1) / TILE + 1;
    if (!reserve(scratch, count, tiles)) return;  // out of memory: the error stays for the caller to read
    static_assert(PASSES == 4, "the passes below are written out for 8-bit digits");
    pass<true, false>(data, scratch.keys[0], count, tiles, 0);
    pass<false, false>(scratch.keys[0], scratch.keys[1], count, tiles, 8);
    pass<false, false>(scratch.keys[1], scratch.keys[0], count, tiles, 16);
    pass<false, true>(scratch.keys[0], data, count, tiles, 24);
}
