// Approach: causal flash attention (query i sees keys 0 .. i): a block takes 32 query rows and walks the key
// tiles of 32 up to the diagonal through shared memory (K and V tiles copied coalesced, q·k from float4
// reads), keeping an online softmax (running maximum, sum and weighted sum of V) in registers; keys past the
// query are masked in the diagonal tile only, and tiles above the diagonal are never read. Row tiles have
// from 1 to M / 32 key tiles, so the work is cut into splits of at most T key tiles each (T chosen for
// about four blocks per multiprocessor, heaviest row tiles launched first); a row tile with several splits
// leaves partial results that a second kernel merges. Adapted from this project's
// challenges/softmax_attention/levels/3_flash_tiles.cu.
#include <cuda_runtime.h>
#include <math.h>

constexpr int BR = 32;                   // query rows per block
constexpr int BC = 32;                   // keys per tile: equal to BR, so row tile x ends at key tile x
constexpr int LANES = 8;                 // threads that share a query row: tx = threadIdx.x % LANES
constexpr int THREADS = BR / 2 * LANES;  // 128: each thread owns 2 rows
constexpr int KEYS = BC / LANES;         // keys of a tile per thread: 4
constexpr int PAD = 4;                   // floats added to each row of a tile: float4-aligned, bank-shifted
constexpr int MAX_D = 128;               // LeetGPU's largest d
constexpr int BLOCKS_PER_SM = 4;         // the split aims at this many blocks per multiprocessor
constexpr float LOG2E = 1.4426950408889634f;
constexpr unsigned FULL = 0xffffffffu;
static_assert(BR == BC, "the diagonal of row tile x is key tile x");

// The shared-memory tiles of the kernel for D (d rounded up to a multiple of 32): 55 KB at D = 128.
template <int D>
struct Tiles {
    float q[BR][D + PAD];  // the block's query rows, times log2(e) / sqrt(d)
    float k[BC][D + PAD];  // the current tile of keys
    float v[BC][D + PAD];  // and of values
    float p[BR][BC + 1];   // exp2 of the tile's scores, for the product with v
};

// How the key tiles are cut: split s of row tile x covers key tiles [s·per_split, min(x + 1, (s + 1)·per_split)).
struct Splits {
    int per_split;
    __host__ __device__ int of_row_tile(int x) const { return x / per_split + 1; }  // ceil((x + 1) / per_split)
};

// Where a block of a row tile with several splits leaves its rows' results: for split s and row i, m and l
// at s·M + i, the weighted sum (not yet divided by l) at (s·M + i)·d.
struct Partials {
    float* m;
    float* l;
    float* o;
};

__device__ float row_max(float v) {  // over the 8 lanes that share a row
    for (int offset = 1; offset < LANES; offset <<= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, offset));
    return v;
}

__device__ float row_sum(float v) {
    for (int offset = 1; offset < LANES; offset <<= 1) v += __shfl_xor_sync(FULL, v, offset);
    return v;
}

__device__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }

__device__ float dot4(float4 a, float4 b, float acc) {
    return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, fmaf(a.x, b.x, acc))));
}

__device__ void add_scaled(float4& acc, float p, float4 v) {
    acc.x = fmaf(p, v.x, acc.x);
    acc.y = fmaf(p, v.y, acc.y);
    acc.z = fmaf(p, v.z, acc.z);
    acc.w = fmaf(p, v.w, acc.w);
}

__device__ void scale4(float4& acc, float c) {
    acc.x *= c;
    acc.y *= c;
    acc.z *= c;
    acc.w *= c;
}

// Block (x, y): row tile row_tiles - 1 - x (the longest first), split y of its key tiles. A row tile with
// one split writes the output itself, otherwise its partial results; a split past the row tile's diagonal
// has nothing to do.
template <int D>
__global__ void __launch_bounds__(THREADS)
causal_tiles(const float* Q, const float* K, const float* V, float* out, Partials partials, int M, int d,
             float score_scale, Splits splits) {
    extern __shared__ float4 shared_words[];  // float4: the tiles are read 16 bytes at a time
    Tiles<D>& s = *reinterpret_cast<Tiles<D>*>(shared_words);
    constexpr int GROUPS = D / 32;  // float4 groups of output columns per thread
    int row_tile = gridDim.x - 1 - blockIdx.x;
    int tile_begin = blockIdx.y * splits.per_split;
    int tile_end = min(row_tile + 1, tile_begin + splits.per_split);
    if (tile_begin >= tile_end) return;  // the whole block: no barrier is skipped by only some threads
    int tid = threadIdx.x, tx = tid % LANES, ty = tid / LANES;
    int row0 = row_tile * BR;

    for (int x = tid; x < BR * D; x += THREADS) {
        int r = x / D, t = x % D;
        s.q[r][t] = row0 + r < M && t < d ? Q[(size_t)(row0 + r) * d + t] * score_scale : 0.0f;
    }

    float m[2] = {-INFINITY, -INFINITY};  // rows ty and ty + 16: running maximum (base-2 units)
    float l[2] = {0.0f, 0.0f};            // and sum of exp2(score - m)
    float4 acc[2][GROUPS];                // and weighted sum of V, columns 4·tx + 32·g .. + 3
    for (int r = 0; r < 2; ++r)
        for (int g = 0; g < GROUPS; ++g) acc[r][g] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

    for (int tile = tile_begin; tile < tile_end; ++tile) {
        int j0 = tile * BC;
        __syncthreads();  // the previous tile is no longer read (and, the first time, q is complete)
        for (int x = tid; x < BC * D; x += THREADS) {
            int r = x / D, t = x % D;
            bool inside = j0 + r < M && t < d;
            s.k[r][t] = inside ? K[(size_t)(j0 + r) * d + t] : 0.0f;
            s.v[r][t] = inside ? V[(size_t)(j0 + r) * d + t] : 0.0f;
        }
        __syncthreads();  // the tile is complete

        float score[2][KEYS];
        for (int r = 0; r < 2; ++r)
            for (int k = 0; k < KEYS; ++k) score[r][k] = 0.0f;
#pragma unroll 8
        for (int t = 0; t < D; t += 4) {
            float4 a = load4(&s.q[ty][t]), b = load4(&s.q[ty + 16][t]);
#pragma unroll
            for (int k = 0; k < KEYS; ++k) {
                float4 key = load4(&s.k[tx + LANES * k][t]);
                score[0][k] = dot4(a, key, score[0][k]);
                score[1][k] = dot4(b, key, score[1][k]);
            }
        }

        bool diagonal = tile == row_tile;
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            int query = row0 + ty + 16 * r;
            float top = -INFINITY;
#pragma unroll
            for (int k = 0; k < KEYS; ++k) {
                int key = j0 + tx + LANES * k;
                if (diagonal && (key > query || key >= M)) score[r][k] = -INFINITY;  // weight 0
                top = fmaxf(top, score[r][k]);
            }
            // Finite: key j0 <= row0 <= query, and j0 < M, so every row keeps a key in every tile.
            float m_new = fmaxf(m[r], row_max(top));
            float correction = exp2f(m[r] - m_new);  // the first tile: exp2(-infinity) = 0
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < KEYS; ++k) {
                float p = exp2f(score[r][k] - m_new);
                s.p[ty + 16 * r][tx + LANES * k] = p;
                sum += p;
            }
            l[r] = l[r] * correction + row_sum(sum);
            m[r] = m_new;
#pragma unroll
            for (int g = 0; g < GROUPS; ++g) scale4(acc[r][g], correction);
        }
        __syncthreads();  // every weight of the tile is in s.p

#pragma unroll 4
        for (int j = 0; j < BC; ++j) {
            float p0 = s.p[ty][j], p1 = s.p[ty + 16][j];
#pragma unroll
            for (int g = 0; g < GROUPS; ++g) {
                float4 value = load4(&s.v[j][4 * tx + 32 * g]);
                add_scaled(acc[0][g], p0, value);
                add_scaled(acc[1][g], p1, value);
            }
        }
    }

    bool split = splits.of_row_tile(row_tile) > 1;
    for (int r = 0; r < 2; ++r) {
        int row = row0 + ty + 16 * r;
        if (row >= M) continue;
        size_t partial_row = (size_t)blockIdx.y * M + row;
        float* dest = split ? partials.o + partial_row * d : out + (size_t)row * d;
        float divisor = split ? 1.0f : l[r];  // a split's sum is divided after the merge
        for (int g = 0; g < GROUPS; ++g) {
            float values[4] = {acc[r][g].x, acc[r][g].y, acc[r][g].z, acc[r][g].w};
            for (int c = 0; c < 4; ++c) {
                int col = 4 * tx + 32 * g + c;
                if (col < d) dest[col] = values[c] / divisor;
            }
        }
        if (split && tx == 0) {
            partials.m[partial_row] = m[r];
            partials.l[partial_row] = l[r];
        }
    }
}

// Output (i, c) of a row whose row tile has several splits: their results rescaled to the largest maximum,
// added, divided by the total sum. Rows of single-split row tiles were written by causal_tiles.
__global__ void merge_splits(Partials partials, float* out, int M, int d, Splits splits) {
    size_t index = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= (size_t)M * d) return;
    int row = (int)(index / d), col = (int)(index % d);
    int count = splits.of_row_tile(row / BR);
    if (count == 1) return;
    float top = -INFINITY;
    for (int s = 0; s < count; ++s) top = fmaxf(top, partials.m[(size_t)s * M + row]);
    float l = 0.0f, o = 0.0f;
    for (int s = 0; s < count; ++s) {
        float weight = exp2f(partials.m[(size_t)s * M + row] - top);
        l = fmaf(partials.l[(size_t)s * M + row], weight, l);
        o = fmaf(partials.o[((size_t)s * M + row) * d + col], weight, o);
    }
    out[index] = o / l;
}

static int multiprocessors() {
    static int count = 0;  // 0: not asked yet; the GPU cannot change while the process runs
    if (count == 0) {
        int device = 0, value = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || value < 1)
            value = 1;  // unknown: one split per row tile, still correct
        count = value;
    }
    return count;
}

// The splits' results: allocated by the first call that needs them and grown when a call needs more.
static float* scratch = nullptr;
static size_t scratch_floats = 0;

static float* scratch_of(size_t floats) {
    if (floats > scratch_floats) {
        cudaFree(scratch);  // waits for kernels still using the old buffer; nullptr is a no-op
        scratch = nullptr;
        scratch_floats = 0;
        if (cudaMalloc(&scratch, floats * sizeof(float)) != cudaSuccess) return nullptr;
        scratch_floats = floats;
    }
    return scratch;
}

// The kernel compiled for D (d rounded up to a multiple of 32).
template <int D>
static void attend(const float* Q, const float* K, const float* V, float* out, int M, int d) {
    int bytes = (int)sizeof(Tiles<D>);
    static bool opted_in = false;  // above 48 KB a kernel must ask for its shared memory (D = 128)
    if (!opted_in) {
        if (cudaFuncSetAttribute(causal_tiles<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) != cudaSuccess)
            return;
        opted_in = true;
    }
    int row_tiles = (M + BR - 1) / BR;
    // Tile pairs (query tile, key tile) below the diagonal, spread over about BLOCKS_PER_SM blocks per
    // multiprocessor: that many tiles per split at most.
    long long pairs = (long long)row_tiles * (row_tiles + 1) / 2;
    long long wanted_blocks = (long long)BLOCKS_PER_SM * multiprocessors();
    Splits splits = {(int)((pairs + wanted_blocks - 1) / wanted_blocks)};
    int most = splits.of_row_tile(row_tiles - 1);  // the last row tile has the most

    Partials partials = {nullptr, nullptr, nullptr};
    if (most > 1) {
        size_t rows = (size_t)most * M;
        float* base = scratch_of(rows * (2 + (size_t)d));
        if (base == nullptr) return;  // out of memory: the error stays for the caller to read
        partials = {base, base + rows, base + 2 * rows};
    }
    float score_scale = LOG2E / sqrtf((float)d);
    causal_tiles<D><<<dim3(row_tiles, most), THREADS, bytes>>>(Q, K, V, out, partials, M, d, score_scale, splits);
    if (most > 1) {
        size_t outputs = (size_t)M * d;
        merge_splits<<<(unsigned)((outputs + 255) / 256), 256>>>(partials, out, M, d, splits);
    }
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int d) {
    if (M <= 0 || d <= 0) return;
    if (d <= 32) attend<32>(Q, K, V, output, M, d);
    else if (d <= 64) attend<64>(Q, K, V, output, M, d);
    else if (d <= 96) attend<96>(Q, K, V, output, M, d);
    else attend<MAX_D>(Q, K, V, output, M, d);  // d <= 128, LeetGPU's limit
}
