// Approach: flash attention per head (head h reads columns h·d_k .. h·d_k + d_k - 1 of the d_model-wide rows):
// a block takes 32 query rows of one head, walks the keys 32 at a time through shared memory (K and V tiles
// copied coalesced, q·k from float4 reads), and keeps an online softmax (running maximum, sum and weighted
// sum of V, rescaled when the maximum grows) in registers, so the N×N scores never exist. Too few blocks for
// the GPU: the keys are split over several blocks and a second kernel merges their partial results. A d_k
// above 128 (up to 1,024 when h is small) takes a simpler kernel, one block per query row and head, the
// row's scores in shared memory. Columns past h·d_k (when h does not divide d_model) are zero, as in the
// reference. Adapted from this project's challenges/softmax_attention/levels/3_flash_tiles.cu.
#include <cuda_runtime.h>
#include <math.h>

constexpr int BR = 32;                   // query rows per block
constexpr int BC = 32;                   // keys per tile
constexpr int LANES = 8;                 // threads that share a query row: tx = threadIdx.x % LANES
constexpr int THREADS = BR / 2 * LANES;  // 128: each thread owns 2 rows
constexpr int KEYS = BC / LANES;         // keys of a tile per thread: 4
constexpr int PAD = 4;                   // floats added to each row of a tile: float4-aligned, bank-shifted
constexpr int FLASH_MAX_D = 128;         // the largest d_k the tiled kernel takes
constexpr int ROW_THREADS = 256;         // threads of the one-row kernel
constexpr float LOG2E = 1.4426950408889634f;
constexpr unsigned FULL = 0xffffffffu;

// The shared-memory tiles of the kernel for D (d_k rounded up to a multiple of 32): 55 KB at D = 128.
template <int D>
struct Tiles {
    float q[BR][D + PAD];  // the block's query rows, times log2(e) / sqrt(d_k)
    float k[BC][D + PAD];  // the current tile of keys
    float v[BC][D + PAD];  // and of values
    float p[BR][BC + 1];   // exp2 of the tile's scores, for the product with v
};

// One head's view of a row-major N × d_model matrix: row i of head h starts at base + i·ld + h·width.
struct HeadView {
    int ld;     // d_model
    int width;  // d_k
};

// Where a block of a split grid leaves its rows' results: for split s, head h and row i, at
// r = (s·heads + h)·N + i, m and l at r, the weighted sum (not yet divided by l) at r·d_k.
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

// Block (x, y, z): head z, query rows 32·x .. 32·x + 31, key tiles [y·tiles_per_split, (y + 1)·tiles_per_split).
// With one split (gridDim.y == 1) it writes the output itself, otherwise its partial results.
template <int D>
__global__ void __launch_bounds__(THREADS)
flash_tiles(const float* Q, const float* K, const float* V, float* out, Partials partials, int n, HeadView view,
            float score_scale, int tiles_per_split) {
    extern __shared__ float4 shared_words[];  // float4: the tiles are read 16 bytes at a time
    Tiles<D>& s = *reinterpret_cast<Tiles<D>*>(shared_words);
    constexpr int GROUPS = D / 32;  // float4 groups of output columns per thread
    const int d = view.width, head = blockIdx.z;
    const size_t column0 = (size_t)head * d;
    int tid = threadIdx.x, tx = tid % LANES, ty = tid / LANES;
    int row0 = blockIdx.x * BR;
    int key_tiles = (n + BC - 1) / BC;
    int tile_begin = blockIdx.y * tiles_per_split;
    int tile_end = min(key_tiles, tile_begin + tiles_per_split);

    for (int x = tid; x < BR * D; x += THREADS) {
        int r = x / D, t = x % D;
        s.q[r][t] = row0 + r < n && t < d ? Q[(size_t)(row0 + r) * view.ld + column0 + t] * score_scale : 0.0f;
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
            bool inside = j0 + r < n && t < d;
            size_t at = (size_t)(j0 + r) * view.ld + column0 + t;
            s.k[r][t] = inside ? K[at] : 0.0f;
            s.v[r][t] = inside ? V[at] : 0.0f;
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

#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float top = -INFINITY;
#pragma unroll
            for (int k = 0; k < KEYS; ++k) {
                if (j0 + tx + LANES * k >= n) score[r][k] = -INFINITY;  // past the last key: weight 0
                top = fmaxf(top, score[r][k]);
            }
            float m_new = fmaxf(m[r], row_max(top));  // finite: every tile has a key below n
            float correction = exp2f(m[r] - m_new);   // the first tile: exp2(-infinity) = 0
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

    for (int r = 0; r < 2; ++r) {
        int row = row0 + ty + 16 * r;
        if (row >= n) continue;
        bool split = gridDim.y > 1;
        size_t partial_row = ((size_t)blockIdx.y * gridDim.z + head) * n + row;
        float* dest = split ? partials.o + partial_row * d : out + (size_t)row * view.ld + column0;
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

// Output (i, c) of head h from the splits' results for that row: each rescaled to the largest maximum, added.
__global__ void merge_splits(Partials partials, float* out, int n, HeadView view, int heads, int splits) {
    const int d = view.width;
    size_t index = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= (size_t)heads * n * d) return;
    int col = (int)(index % d);
    size_t head_row = index / d;  // head · n + row
    int head = (int)(head_row / n), row = (int)(head_row % n);
    size_t per_split = (size_t)heads * n;
    float top = -INFINITY;
    for (int s = 0; s < splits; ++s) top = fmaxf(top, partials.m[s * per_split + head_row]);
    float l = 0.0f, o = 0.0f;
    for (int s = 0; s < splits; ++s) {
        float weight = exp2f(partials.m[s * per_split + head_row] - top);
        l = fmaf(partials.l[s * per_split + head_row], weight, l);
        o = fmaf(partials.o[(s * per_split + head_row) * d + col], weight, o);
    }
    out[(size_t)row * view.ld + (size_t)head * d + col] = o / l;
}

// Sum (or maximum) of v over the block of ROW_THREADS threads; every thread gets it.
template <bool MAX>
__device__ float block_reduce(float v) {
    __shared__ float warp_values[ROW_THREADS / 32];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset >>= 1) {
        float other = __shfl_xor_sync(FULL, v, offset);
        v = MAX ? fmaxf(v, other) : v + other;
    }
    if (lane == 0) warp_values[warp] = v;
    __syncthreads();
    v = warp_values[0];
    for (int w = 1; w < ROW_THREADS / 32; ++w) v = MAX ? fmaxf(v, warp_values[w]) : v + warp_values[w];
    __syncthreads();  // warp_values may be written again by the next call
    return v;
}

// For d_k above FLASH_MAX_D: block (i, h) computes query row i of head h. Its q and its n scores sit in
// shared memory; a warp per key forms q·k (lanes across d_k, coalesced), then the row's softmax, then each
// thread a column of the weighted sum of V (threads across columns, coalesced).
__global__ void __launch_bounds__(ROW_THREADS)
attend_row(const float* Q, const float* K, const float* V, float* out, int n, HeadView view, float scale) {
    extern __shared__ float row_shared[];
    const int d = view.width;
    float* q = row_shared;
    float* scores = row_shared + d;
    const size_t column0 = (size_t)blockIdx.y * d;
    const int row = blockIdx.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int t = threadIdx.x; t < d; t += ROW_THREADS) q[t] = Q[(size_t)row * view.ld + column0 + t];
    __syncthreads();
    for (int j = warp; j < n; j += ROW_THREADS / 32) {
        const float* key = K + (size_t)j * view.ld + column0;
        float partial = 0.0f;
        for (int t = lane; t < d; t += 32) partial = fmaf(q[t], key[t], partial);
        for (int offset = 16; offset > 0; offset >>= 1) partial += __shfl_xor_sync(FULL, partial, offset);
        if (lane == 0) scores[j] = partial * scale;
    }
    __syncthreads();
    float top = -INFINITY;
    for (int j = threadIdx.x; j < n; j += ROW_THREADS) top = fmaxf(top, scores[j]);
    top = block_reduce<true>(top);
    float sum = 0.0f;
    for (int j = threadIdx.x; j < n; j += ROW_THREADS) {
        float e = expf(scores[j] - top);
        scores[j] = e;
        sum += e;
    }
    sum = block_reduce<false>(sum);  // its barriers also make every scores[j] visible
    for (int c = threadIdx.x; c < d; c += ROW_THREADS) {
        float o = 0.0f;
        for (int j = 0; j < n; ++j) o = fmaf(scores[j], V[(size_t)j * view.ld + column0 + c], o);
        out[(size_t)row * view.ld + column0 + c] = o / sum;
    }
}

// Columns covered .. ld - 1 of every row set to 0 (when h does not divide d_model, no head writes them).
__global__ void zero_columns(float* out, int n, int ld, int covered) {
    size_t index = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t width = (size_t)(ld - covered);
    if (index < (size_t)n * width) out[index / width * ld + covered + index % width] = 0.0f;
}

static int multiprocessors() {
    static int count = 0;  // 0: not asked yet; the GPU cannot change while the process runs
    if (count == 0) {
        int device = 0, value = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || value < 1)
            value = 1;  // unknown: no split, still correct
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

// Every head through the tiled kernel compiled for D (d_k rounded up to a multiple of 32).
template <int D>
static void attend_tiles(const float* Q, const float* K, const float* V, float* out, int n, HeadView view, int heads) {
    int bytes = (int)sizeof(Tiles<D>);
    static bool opted_in = false;  // above 48 KB a kernel must ask for its shared memory (D = 128)
    if (!opted_in) {
        if (cudaFuncSetAttribute(flash_tiles<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) != cudaSuccess)
            return;
        opted_in = true;
    }
    int row_tiles = (n + BR - 1) / BR, key_tiles = (n + BC - 1) / BC;
    // Splits: enough blocks for two per multiprocessor, at least one key tile each, none empty.
    int wanted = (2 * multiprocessors() + row_tiles * heads - 1) / (row_tiles * heads);
    int splits = min(key_tiles, max(1, wanted));
    int tiles_per_split = (key_tiles + splits - 1) / splits;
    splits = (key_tiles + tiles_per_split - 1) / tiles_per_split;

    Partials partials = {nullptr, nullptr, nullptr};
    if (splits > 1) {
        size_t rows = (size_t)splits * heads * n;
        float* base = scratch_of(rows * (2 + (size_t)view.width));
        if (base == nullptr) return;  // out of memory: the error stays for the caller to read
        partials = {base, base + rows, base + 2 * rows};
    }
    float score_scale = LOG2E / sqrtf((float)view.width);
    flash_tiles<D><<<dim3(row_tiles, splits, heads), THREADS, bytes>>>(Q, K, V, out, partials, n, view, score_scale,
                                                                       tiles_per_split);
    if (splits > 1) {
        size_t outputs = (size_t)heads * n * view.width;
        merge_splits<<<(unsigned)((outputs + 255) / 256), 256>>>(partials, out, n, view, heads, splits);
    }
}

// Every head through the one-row kernel, for d_k above FLASH_MAX_D.
static void attend_rows(const float* Q, const float* K, const float* V, float* out, int n, HeadView view, int heads) {
    size_t bytes = ((size_t)view.width + n) * sizeof(float);
    if (bytes > 48 * 1024 &&
        cudaFuncSetAttribute(attend_row, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess)
        return;
    attend_row<<<dim3(n, heads), ROW_THREADS, bytes>>>(Q, K, V, out, n, view, 1.0f / sqrtf((float)view.width));
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int N, int d_model, int h) {
    if (N <= 0 || d_model <= 0 || h <= 0) return;
    HeadView view = {d_model, d_model / h};
    int covered = h * view.width;
    if (covered < d_model) {  // columns no head owns: zero, as in the reference
        size_t cells = (size_t)N * (d_model - covered);
        zero_columns<<<(unsigned)((cells + 255) / 256), 256>>>(output, N, d_model, covered);
    }
    if (view.width == 0) return;
    if (view.width <= 32) attend_tiles<32>(Q, K, V, output, N, view, h);
    else if (view.width <= 64) attend_tiles<64>(Q, K, V, output, N, view, h);
    else if (view.width <= 96) attend_tiles<96>(Q, K, V, output, N, view, h);
    else if (view.width <= FLASH_MAX_D) attend_tiles<FLASH_MAX_D>(Q, K, V, output, N, view, h);
    else attend_rows(Q, K, V, output, N, view, h);
}
