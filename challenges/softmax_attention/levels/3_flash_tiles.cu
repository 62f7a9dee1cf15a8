// expect: ACCEPTED
// Level 3 — flash attention: a tile of 32 query rows per block, K and V staged in shared memory 32
// keys at a time, an online softmax in registers; the keys split over several blocks when the query
// tiles alone would leave the GPU idle.
//
// Over level 2, where every block read all of K and V for a single query row:
// - A block takes BR = 32 query rows. It copies them to shared memory once, then walks the keys a
//   tile of BC = 32 at a time: the tile's rows of K and V are copied to shared memory (coalesced, d
//   values per row), and all 32 query rows use them. The grid reads K and V M / 32 times instead of
//   M times: 540 MB instead of 17 GB at M = N = 4096, d = 128.
// - Each of the 128 threads owns 2 query rows (ty and ty + 16, ty = thread / 8) and, in each tile, 4
//   keys (tx, tx + 8, tx + 16, tx + 24, tx = thread % 8): it computes those 2 × 4 scores from float4
//   reads of shared memory, 32 multiply-adds for every 6 loads. The rows of the K tile are padded by 4
//   floats so that the 8 keys a quarter-warp reads lie in 8 different groups of banks.
// - Online softmax: each row keeps its running maximum m and sum l of exp(score - m) in registers, and
//   so does its weighted sum of V, the 2 × d/8 output values the thread owns (columns 4·tx + 32·g ..
//   + 3). A tile that raises the maximum from m to m' multiplies l and the weighted sum by
//   exp(m - m') before adding its own terms, so the M×N scores exist only a tile at a time. The 8
//   threads sharing a row find the tile's maximum and sum with three shuffles each.
// - Base 2: the query tile is multiplied by log2(e) / sqrt(d) as it is copied, so each score comes
//   out as q·k / sqrt(d) · log2(e) and exp(x) is exp2f of it: one multiplication per score fewer, and
//   exp2f is the GPU's native exponential. The maximum and l are kept in the same units.
// - Few query tiles (LeetGPU's M = 512 makes 16): the keys are split into S ranges, each range a block
//   of its own, so that the grid has at least two blocks per multiprocessor. Each block leaves its
//   rows' (m, l, weighted sum) in scratch memory, and a second kernel merges the S results of each
//   row as the tiles were merged: rescaled to the largest m, added, divided by the total l.
// Every d from 1 to 128 runs through the kernel compiled for the next multiple of 32 (D = 32, 64, 96,
// 128): values past d, like keys past N, are stored as zeros in shared memory, and the scores of keys
// past N are set to -infinity (an exp2f of 0).
//
// Each block does the work of 32 of level 2's, from shared memory instead of L2: the multiply-adds,
// not memory, are now the limit (8.6 GFLOP at M = N = 4096, d = 128: a few tenths of a millisecond on
// an H100, where level 2 moves 17 GB through L2, a few milliseconds). At LeetGPU's 512 × 256 × 128 the
// split gives 128 blocks of one key tile each, where level 2 has 512 blocks each walking all 256 keys.
#include <cuda_runtime.h>
#include <math.h>

constexpr int BR = 32;                // query rows per block
constexpr int BC = 32;                // keys per tile
constexpr int LANES = 8;              // threads that share a query row: tx = threadIdx.x % LANES
constexpr int THREADS = BR / 2 * LANES;  // 128: each thread owns 2 rows
constexpr int KEYS = BC / LANES;      // keys of a tile per thread: 4
constexpr int PAD = 4;                // floats added to each row of a tile: float4-aligned, bank-shifted
constexpr int MAX_D = 128;            // LeetGPU's largest d
constexpr float LOG2E = 1.4426950408889634f;
constexpr unsigned FULL = 0xffffffffu;

// The shared-memory tiles of the kernel for D (d rounded up to a multiple of 32): 55 KB at D = 128.
template <int D>
struct Tiles {
    float q[BR][D + PAD];  // the block's query rows, times log2(e) / sqrt(d)
    float k[BC][D + PAD];  // the current tile of keys
    float v[BC][D + PAD];  // and of values
    float p[BR][BC + 1];   // exp2 of the tile's scores, for the product with v
};

// Where a block of a split grid leaves its rows' results: for split s and row i, m and l at
// s·M + i, the weighted sum (not yet divided by l) at (s·M + i)·d.
struct Partials {
    float* m;
    float* l;
    float* o;
};

// Maximum and sum over the 8 lanes that share a row (lanes 8a .. 8a + 7 of a warp).
__device__ float row_max(float v) {
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

// Block (x, y): query rows 32·x .. 32·x + 31, key tiles [y·tiles_per_split, (y + 1)·tiles_per_split).
// With one split (gridDim.y == 1) it writes the output itself, otherwise its partial results.
template <int D>
__global__ void __launch_bounds__(THREADS)
flash_tiles(const float* Q, const float* K, const float* V, float* out, Partials partials, int M, int N, int d,
            float score_scale, int tiles_per_split) {
    extern __shared__ float4 shared_words[];  // float4: the tiles are read 16 bytes at a time
    Tiles<D>& s = *reinterpret_cast<Tiles<D>*>(shared_words);
    constexpr int GROUPS = D / 32;  // float4 groups of output columns per thread
    int tid = threadIdx.x, tx = tid % LANES, ty = tid / LANES;
    int row0 = blockIdx.x * BR;
    int key_tiles = (N + BC - 1) / BC;
    int tile_begin = blockIdx.y * tiles_per_split;
    int tile_end = min(key_tiles, tile_begin + tiles_per_split);

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
            bool inside = j0 + r < N && t < d;
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

#pragma unroll
        for (int r = 0; r < 2; ++r) {
            float top = -INFINITY;
#pragma unroll
            for (int k = 0; k < KEYS; ++k) {
                if (j0 + tx + LANES * k >= N) score[r][k] = -INFINITY;  // past the last key: weight 0
                top = fmaxf(top, score[r][k]);
            }
            float m_new = fmaxf(m[r], row_max(top));  // finite: every tile has a key below N
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
        if (row >= M) continue;
        size_t at = gridDim.y == 1 ? (size_t)row * d : ((size_t)blockIdx.y * M + row) * d;
        float* dest = gridDim.y == 1 ? out + at : partials.o + at;
        float divisor = gridDim.y == 1 ? l[r] : 1.0f;  // a split's sum is divided after the merge
        for (int g = 0; g < GROUPS; ++g) {
            float values[4] = {acc[r][g].x, acc[r][g].y, acc[r][g].z, acc[r][g].w};
            for (int c = 0; c < 4; ++c) {
                int col = 4 * tx + 32 * g + c;
                if (col < d) dest[col] = values[c] / divisor;
            }
        }
        if (gridDim.y > 1 && tx == 0) {
            partials.m[(size_t)blockIdx.y * M + row] = m[r];
            partials.l[(size_t)blockIdx.y * M + row] = l[r];
        }
    }
}

// Output (i, c) from the splits' results for row i: each rescaled to the largest maximum, then added.
__global__ void merge_splits(Partials partials, float* out, int M, int d, int splits) {
    size_t index = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= (size_t)M * d) return;
    int row = (int)(index / d), col = (int)(index % d);
    float top = -INFINITY;
    for (int s = 0; s < splits; ++s) top = fmaxf(top, partials.m[(size_t)s * M + row]);
    float l = 0.0f, o = 0.0f;
    for (int s = 0; s < splits; ++s) {
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
            value = 1;  // unknown: no split, still correct
        count = value;
    }
    return count;
}

// The splits' results: allocated by the first call that needs them and grown when a call needs more,
// never freed (the process ends with them; freeing them in every call would cost a cudaMalloc, and
// cudaFree's device synchronization, in every call).
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

// Launches the kernel for D; false when a CUDA call fails (the output then stays unwritten, and the
// check says so).
template <int D>
static bool attend(const float* Q, const float* K, const float* V, float* out, int M, int N, int d) {
    int bytes = (int)sizeof(Tiles<D>);
    static bool opted_in = false;  // above 48 KB a kernel must ask for its shared memory (D = 128)
    if (!opted_in) {
        if (cudaFuncSetAttribute(flash_tiles<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) != cudaSuccess)
            return false;
        opted_in = true;
    }
    int row_tiles = (M + BR - 1) / BR, key_tiles = (N + BC - 1) / BC;
    // Splits: enough blocks for two per multiprocessor, at least one key tile each, none empty.
    int wanted = (2 * multiprocessors() + row_tiles - 1) / row_tiles;
    int splits = min(key_tiles, max(1, wanted));
    int tiles_per_split = (key_tiles + splits - 1) / splits;
    splits = (key_tiles + tiles_per_split - 1) / tiles_per_split;

    Partials partials = {nullptr, nullptr, nullptr};
    if (splits > 1) {
        size_t rows = (size_t)splits * M;
        float* base = scratch_of(rows * (2 + (size_t)d));
        if (base == nullptr) return false;
        partials = {base, base + rows, base + 2 * rows};
    }
    float score_scale = LOG2E / sqrtf((float)d);
    flash_tiles<D><<<dim3(row_tiles, splits), THREADS, bytes>>>(Q, K, V, out, partials, M, N, d, score_scale,
                                                                tiles_per_split);
    if (splits > 1) {
        size_t outputs = (size_t)M * d;
        merge_splits<<<(unsigned)((outputs + 255) / 256), 256>>>(partials, out, M, d, splits);
    }
    return cudaGetLastError() == cudaSuccess;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    if (d <= 32) attend<32>(Q, K, V, output, M, N, d);
    else if (d <= 64) attend<64>(Q, K, V, output, M, N, d);
    else if (d <= 96) attend<96>(Q, K, V, output, M, N, d);
    else attend<MAX_D>(Q, K, V, output, M, N, d);  // d <= 128, LeetGPU's limit
}
