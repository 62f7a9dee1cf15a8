// Emulator stand-in for <mma.h>: nvcuda::wmma with FP32 accumulation.
//
// On a GPU a fragment is spread over the 32 lanes of a warp in an unspecified layout. Here every
// lane holds the whole tile and does the whole operation, so element-wise code over
// `frag.x[0 .. num_elements)` (scaling, __float_to_tf32) means the same thing. Inputs of TF32
// fragments are truncated to TF32 in mma_sync, as tensor cores do, so TF32 precision shows.
#pragma once
#include "cuda_emu.h"
#include "cuda_fp16.h"
#include "cuda_bf16.h"  // as CUDA's mma.h: bfloat16 fragments

namespace nvcuda {
namespace wmma {

struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
namespace precision {
struct tf32 {};
}  // namespace precision
enum layout_t { mem_row_major, mem_col_major };

namespace detail {
template <class T> struct storage { using type = T; };
template <> struct storage<precision::tf32> { using type = float; };

template <class Use, int M, int N, int K> struct extent;
template <int M, int N, int K> struct extent<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct extent<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct extent<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };

inline float truncate_to_tf32(float value) {
    unsigned bits;
    std::memcpy(&bits, &value, 4);
    if ((bits & 0x7f800000u) != 0x7f800000u) bits &= 0xffffe000u;
    std::memcpy(&value, &bits, 4);
    return value;
}
template <class T> float operand(float v) { return v; }
template <> inline float operand<precision::tf32>(float v) { return truncate_to_tf32(v); }
template <class T> float operand(__half v) { return static_cast<float>(v); }
}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
    using element_type = typename detail::storage<T>::type;
    static constexpr int rows = detail::extent<Use, M, N, K>::rows;
    static constexpr int cols = detail::extent<Use, M, N, K>::cols;
    static constexpr int num_elements = rows * cols;
    element_type x[num_elements];  // the whole tile, row-major
};

inline float __float_to_tf32(float value) {
    unsigned bits;
    std::memcpy(&bits, &value, 4);
    if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0x1000u) & 0xffffe000u;  // nearest, ties away
    std::memcpy(&value, &bits, 4);
    return value;
}

template <class Use, int M, int N, int K, class T, class Layout, class V>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const V& value) {
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = static_cast<typename fragment<Use, M, N, K, T, Layout>::element_type>(value);
}

template <class Use, int M, int N, int K, class T, class Layout, class P>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const P* p, unsigned ldm) {
    constexpr bool col = std::is_same<Layout, col_major>::value;
    for (int r = 0; r < f.rows; ++r)
        for (int c = 0; c < f.cols; ++c) f.x[r * f.cols + c] = col ? p[c * ldm + r] : p[r * ldm + c];
}

template <int M, int N, int K, class T, class P>
void load_matrix_sync(fragment<accumulator, M, N, K, T, void>& f, const P* p, unsigned ldm, layout_t layout) {
    for (int r = 0; r < f.rows; ++r)
        for (int c = 0; c < f.cols; ++c)
            f.x[r * f.cols + c] = layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c];
}

template <int M, int N, int K, class T, class P>
void store_matrix_sync(P* p, const fragment<accumulator, M, N, K, T, void>& f, unsigned ldm, layout_t layout) {
    for (int r = 0; r < f.rows; ++r)
        for (int c = 0; c < f.cols; ++c)
            (layout == mem_col_major ? p[c * ldm + r] : p[r * ldm + c]) = static_cast<P>(f.x[r * f.cols + c]);
}

template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC>
void mma_sync(fragment<accumulator, M, N, K, TC, void>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
              const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC, void>& c) {
    // Each operand converted once (a half's conversion costs more than the multiply-add it feeds), then
    // the same fused multiply-adds in the same order as before: the same bits.
    float fa[M * K], fb[K * N], result[M * N];
    for (int i = 0; i < M * K; ++i) fa[i] = detail::operand<TA>(a.x[i]);
    for (int i = 0; i < K * N; ++i) fb[i] = detail::operand<TB>(b.x[i]);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float sum = static_cast<float>(c.x[i * N + j]);
            for (int k = 0; k < K; ++k) sum = std::fma(fa[i * K + k], fb[k * N + j], sum);
            result[i * N + j] = sum;
        }
    for (int i = 0; i < M * N; ++i) d.x[i] = static_cast<TC>(result[i]);
}

}  // namespace wmma
}  // namespace nvcuda
