// emu_types.h -- device-side CUDA vocabulary for the CPU emulator.
//
// A student's .cu file is compiled as plain C++17 (g++, x86-64 Linux) and every
// CUDA thread runs as a fiber; several OS threads execute different blocks in
// parallel. This header supplies the parts of CUDA's implicit device-side
// environment that do not depend on the execution model:
//
//   1. execution-space / qualifier macros (__global__, __device__, ...)
//   2. built-in vector types (float4, int2, ..., uint3, dim3) + make_<type>()
//   3. math: unqualified <cmath> functions, CUDA-only math functions,
//      floating-point / integer / conversion / bit-cast intrinsics, min / max
//   4. cache-hinted loads and stores (__ldg, __ldcg, __stcg, ...)
//   5. atomics (real, thread-safe across OS threads) and memory fences
//   6. misc: __trap, __brkpt, clock64
//
// Everything user-visible lives in the global namespace, spelled exactly like
// CUDA spells it, with CUDA's own overloads and no others: a file may define a
// function of a name CUDA uses for a type CUDA does not (LeetGPU answers define
// `atomicMax(float*, float)`), and a template or an overload CUDA lacks would
// make that a redefinition or its calls ambiguous (tests/test_emulator_api.py
// asks nvcc about every global declaration here). Helpers live in namespace
// emu::detail; macros used only in here are #undef'd after use.
//
// Deliberately NOT defined here (the including emulator header owns them):
// __shared__, __syncthreads*, threadIdx, blockIdx, blockDim, gridDim,
// warpSize and all warp-level functions. __CUDACC__ and __CUDA_ARCH__ are
// never defined, so user code takes its host-side preprocessor paths.

#pragma once

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "emu_types.h requires C++17"
#endif

// ---------------------------------------------------------------------------
// 0. Standard headers that CUDA's implicit includes make available.
// ---------------------------------------------------------------------------
// <memory> and <string> are included before the qualifier macros are defined:
// libstdc++'s <bits/shared_ptr_base.h> (and, from GCC 13, <bits/basic_string.h>)
// spells an attribute as __attribute__((__noinline__)), which would break once
// __noinline__ is a macro. Including them here first means their include guards
// keep later includes of them (by user code or the runtime) harmless.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cstdint>
#include <climits>
#include <cfloat>
#include <algorithm>
#include <type_traits>
#include <limits>
#include <chrono>
#include <memory>
#include <string>
// libstdc++'s <math.h>/<stdlib.h> wrappers add `using std::sqrt; using std::abs;`
// etc. to the global namespace, so sqrt(float), fabs(float), abs(float), ...
// resolve to the float overloads unqualified, exactly as in CUDA.
#include <math.h>
#include <stdlib.h>

using std::size_t;

// ---------------------------------------------------------------------------
// 1. Execution-space and qualifier macros.
// ---------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#ifndef __restrict__
#define __restrict__ __restrict
#endif
#define __constant__
#define __managed__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__

// Forces inlining of the tiny helpers below without touching user code.
#define EMU_TYPES_INLINE_ inline __attribute__((always_inline))

// ---------------------------------------------------------------------------
// 2. Built-in vector types.
// ---------------------------------------------------------------------------
// Layout and alignment follow CUDA's vector_types.h on 64-bit Linux. The types
// are aggregates (no constructors) just like CUDA's, so `float4 v = {...};`
// and `float4 v{};` work.
#define EMU_VEC1(N, T, A)                                                  \
    struct alignas(A) N { T x; };                                          \
    constexpr EMU_TYPES_INLINE_ N make_##N(T x) { return N{x}; }
#define EMU_VEC2(N, T, A)                                                  \
    struct alignas(A) N { T x, y; };                                       \
    constexpr EMU_TYPES_INLINE_ N make_##N(T x, T y) { return N{x, y}; }
#define EMU_VEC3(N, T)                                                     \
    struct N { T x, y, z; };                                               \
    constexpr EMU_TYPES_INLINE_ N make_##N(T x, T y, T z) { return N{x, y, z}; }
#define EMU_VEC4(N, T, A)                                                  \
    struct alignas(A) N { T x, y, z, w; };                                 \
    constexpr EMU_TYPES_INLINE_ N make_##N(T x, T y, T z, T w) { return N{x, y, z, w}; }

// Alignment of the 2- and 4-vectors is min(16, n * sizeof(T)) (as in CUDA);
// 1- and 3-vectors have only their element's natural alignment.
#define EMU_VEC_FAMILY(P, T)                                               \
    EMU_VEC1(P##1, T, alignof(T))                                          \
    EMU_VEC2(P##2, T, (2 * sizeof(T) < 16 ? 2 * sizeof(T) : 16))           \
    EMU_VEC3(P##3, T)                                                      \
    EMU_VEC4(P##4, T, (4 * sizeof(T) < 16 ? 4 * sizeof(T) : 16))

EMU_VEC_FAMILY(char, signed char)
EMU_VEC_FAMILY(uchar, unsigned char)
EMU_VEC_FAMILY(short, short)
EMU_VEC_FAMILY(ushort, unsigned short)
EMU_VEC_FAMILY(int, int)
EMU_VEC_FAMILY(uint, unsigned int)
EMU_VEC_FAMILY(long, long int)
EMU_VEC_FAMILY(ulong, unsigned long int)
EMU_VEC_FAMILY(longlong, long long int)
EMU_VEC_FAMILY(ulonglong, unsigned long long int)
EMU_VEC_FAMILY(float, float)
EMU_VEC_FAMILY(double, double)

// CUDA 13 spellings of the 32-byte 4-vectors: the *_16a variants are the
// legacy 16-byte-aligned types, the *_32a variants are 32-byte aligned.
#define EMU_VEC4_ALIGNED(P, T)                                             \
    typedef P##4 P##4_16a;                                                 \
    constexpr EMU_TYPES_INLINE_ P##4_16a make_##P##4_16a(T x, T y, T z, T w) {    \
        return P##4_16a{x, y, z, w};                                       \
    }                                                                      \
    EMU_VEC4(P##4_32a, T, 32)
EMU_VEC4_ALIGNED(long, long int)
EMU_VEC4_ALIGNED(ulong, unsigned long int)
EMU_VEC4_ALIGNED(longlong, long long int)
EMU_VEC4_ALIGNED(ulonglong, unsigned long long int)
EMU_VEC4_ALIGNED(double, double)

#undef EMU_VEC_FAMILY
#undef EMU_VEC4_ALIGNED
#undef EMU_VEC1
#undef EMU_VEC2
#undef EMU_VEC3
#undef EMU_VEC4

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};

static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 layout");
static_assert(sizeof(int4) == 16 && alignof(int4) == 16, "int4 layout");
static_assert(sizeof(uint4) == 16 && alignof(uint4) == 16, "uint4 layout");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 layout");
static_assert(sizeof(int2) == 8 && alignof(int2) == 8, "int2 layout");
static_assert(sizeof(double2) == 16 && alignof(double2) == 16, "double2 layout");
static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3 layout");
static_assert(sizeof(int3) == 12 && alignof(int3) == 4, "int3 layout");
static_assert(sizeof(uint3) == 12 && alignof(uint3) == 4, "uint3 layout");
static_assert(sizeof(char4) == 4 && alignof(char4) == 4, "char4 layout");
static_assert(sizeof(uchar4) == 4 && alignof(uchar4) == 4, "uchar4 layout");
static_assert(sizeof(short4) == 8 && alignof(short4) == 8, "short4 layout");
static_assert(sizeof(char3) == 3 && alignof(char3) == 1, "char3 layout");
static_assert(sizeof(double4) == 32 && alignof(double4) == 16, "double4 layout");
static_assert(sizeof(longlong4) == 32 && alignof(longlong4) == 16, "longlong4 layout");
static_assert(sizeof(long2) == 16 && alignof(long2) == 16, "long2 layout");
static_assert(sizeof(double4_32a) == 32 && alignof(double4_32a) == 32, "double4_32a layout");
static_assert(sizeof(dim3) == 12, "dim3 layout");

// ---------------------------------------------------------------------------
// 3. Math.
// ---------------------------------------------------------------------------
namespace emu {
namespace detail {

// Opaque identity: the compiler cannot see through it, so it can neither
// contract a multiply and an add across it into an FMA nor constant-fold the
// rounding away. Costs nothing at run time (the value stays in its register).
template <class T>
EMU_TYPES_INLINE_ T fp_opaque(T v) {
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
    __asm__("" : "+x"(v));
#else
    __asm__("" : "+m"(v));
#endif
    return v;
}

template <class To, class From>
EMU_TYPES_INLINE_ To bit_cast(const From& from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast size mismatch");
    To to;
    std::memcpy(&to, &from, sizeof(To));
    return to;
}

// Round an already-representable floating value to an integral value with
// ties to even, independent of the current FP environment rounding mode.
template <class F>
EMU_TYPES_INLINE_ F round_half_even(F v) {
    F t = std::trunc(v);
    F d = v - t;  // exact: the fractional part of v
    if (d > F(0.5)) return t + F(1);
    if (d < F(-0.5)) return t - F(1);
    if (d == F(0.5) || d == F(-0.5)) {
        if (std::fmod(t, F(2)) != F(0)) return t + (d > 0 ? F(1) : F(-1));
    }
    return t;
}

// Saturating conversion of an integral-valued floating number to integer type
// I (what cvt.*.s32/u32/s64/u64 do on the GPU): NaN -> 0, out of range ->
// clamped to the destination range.
template <class I, class F>
EMU_TYPES_INLINE_ I sat_to_int(F r) {
    static_assert(std::is_integral<I>::value, "integer destination");
    static_assert(std::is_floating_point<F>::value && sizeof(F) <= sizeof(double),
                  "float or double source");
    const double v = static_cast<double>(r);  // exact
    if (v != v) return I(0);
    // Both bounds are 0 or powers of two, hence exact in double.
    const double lo = static_cast<double>(std::numeric_limits<I>::min());
    const double hi_excl = static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
    if (v < lo) return std::numeric_limits<I>::min();
    if (v >= hi_excl) return std::numeric_limits<I>::max();
    return static_cast<I>(v);
}

// fmin/fmax semantics (a NaN operand yields the other operand), written so
// that the compiler can inline them instead of calling libm.
template <class F>
EMU_TYPES_INLINE_ F nan_min(F a, F b) { return (b < a || a != a) ? b : a; }
template <class F>
EMU_TYPES_INLINE_ F nan_max(F a, F b) { return (a < b || a != a) ? b : a; }

}  // namespace detail
}  // namespace emu

// ---- CUDA math functions that glibc does not already provide ---------------
// (sqrtf, expf, exp2f, logf, log2f, log10f, powf, sinf, cosf, tanf, tanhf, fabsf,
// floorf, ceilf, roundf, truncf, fminf, fmaxf, fmaf, fmodf, copysignf, erff,
// atan2f, ... and their double versions come from <math.h>; exp10f/exp10 and
// sincosf/sincos are GNU extensions that glibc declares under _GNU_SOURCE,
// which g++ always defines. Fallbacks are provided for other C libraries.)
#if !defined(__USE_GNU)
EMU_TYPES_INLINE_ float exp10f(float x) { return std::pow(10.0f, x); }
EMU_TYPES_INLINE_ double exp10(double x) { return std::pow(10.0, x); }
EMU_TYPES_INLINE_ void sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
EMU_TYPES_INLINE_ void sincos(double x, double* s, double* c) { *s = std::sin(x); *c = std::cos(x); }
#endif

EMU_TYPES_INLINE_ float rsqrtf(float x) { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(x))); }
EMU_TYPES_INLINE_ double rsqrt(double x) { return 1.0 / std::sqrt(x); }
EMU_TYPES_INLINE_ float rcbrtf(float x) { return static_cast<float>(1.0 / std::cbrt(static_cast<double>(x))); }
EMU_TYPES_INLINE_ double rcbrt(double x) { return 1.0 / std::cbrt(x); }
EMU_TYPES_INLINE_ float fdividef(float x, float y) { return x / y; }
EMU_TYPES_INLINE_ double fdivide(double x, double y) { return x / y; }
EMU_TYPES_INLINE_ float sinpif(float x) { return static_cast<float>(std::sin(3.14159265358979323846 * static_cast<double>(x))); }
EMU_TYPES_INLINE_ float cospif(float x) { return static_cast<float>(std::cos(3.14159265358979323846 * static_cast<double>(x))); }
EMU_TYPES_INLINE_ double sinpi(double x) { return std::sin(3.14159265358979323846 * x); }
EMU_TYPES_INLINE_ double cospi(double x) { return std::cos(3.14159265358979323846 * x); }
EMU_TYPES_INLINE_ void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
EMU_TYPES_INLINE_ void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
EMU_TYPES_INLINE_ float rhypotf(float x, float y) { return static_cast<float>(1.0 / std::hypot(static_cast<double>(x), static_cast<double>(y))); }
EMU_TYPES_INLINE_ double rhypot(double x, double y) { return 1.0 / std::hypot(x, y); }
EMU_TYPES_INLINE_ float norm3df(float a, float b, float c) {
    const double da = a, db = b, dc = c;
    return static_cast<float>(std::sqrt(da * da + db * db + dc * dc));
}
EMU_TYPES_INLINE_ float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
EMU_TYPES_INLINE_ float norm4df(float a, float b, float c, float d) {
    const double da = a, db = b, dc = c, dd = d;
    return static_cast<float>(std::sqrt(da * da + db * db + dc * dc + dd * dd));
}
EMU_TYPES_INLINE_ float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }
EMU_TYPES_INLINE_ float normcdff(float x) { return static_cast<float>(0.5 * std::erfc(-static_cast<double>(x) * 0.70710678118654752440)); }
EMU_TYPES_INLINE_ double normcdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }

// ---- single-precision intrinsics ------------------------------------------
// The *_rn arithmetic intrinsics are never contracted into an FMA: their
// operands and results pass through emu::detail::fp_opaque.
EMU_TYPES_INLINE_ float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
EMU_TYPES_INLINE_ float __fmaf_rz(float a, float b, float c) { return std::fma(a, b, c); }  // approx: rn
EMU_TYPES_INLINE_ float __fmaf_ru(float a, float b, float c) { return std::fma(a, b, c); }  // approx: rn
EMU_TYPES_INLINE_ float __fmaf_rd(float a, float b, float c) { return std::fma(a, b, c); }  // approx: rn
EMU_TYPES_INLINE_ float __fmul_rn(float a, float b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) * fp_opaque(b));
}
EMU_TYPES_INLINE_ float __fadd_rn(float a, float b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) + fp_opaque(b));
}
EMU_TYPES_INLINE_ float __fsub_rn(float a, float b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) - fp_opaque(b));
}
EMU_TYPES_INLINE_ float __fdiv_rn(float a, float b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) / fp_opaque(b));
}
EMU_TYPES_INLINE_ float __fdividef(float a, float b) { return a / b; }
EMU_TYPES_INLINE_ float __frcp_rn(float x) { return 1.0f / x; }
EMU_TYPES_INLINE_ float __fsqrt_rn(float x) { return std::sqrt(x); }
EMU_TYPES_INLINE_ float __frsqrt_rn(float x) { return rsqrtf(x); }
EMU_TYPES_INLINE_ float __expf(float x) { return std::exp(x); }
EMU_TYPES_INLINE_ float __exp10f(float x) { return exp10f(x); }
EMU_TYPES_INLINE_ float __logf(float x) { return std::log(x); }
EMU_TYPES_INLINE_ float __log2f(float x) { return std::log2(x); }
EMU_TYPES_INLINE_ float __log10f(float x) { return std::log10(x); }
EMU_TYPES_INLINE_ float __powf(float x, float y) { return std::pow(x, y); }
EMU_TYPES_INLINE_ float __sinf(float x) { return std::sin(x); }
EMU_TYPES_INLINE_ float __cosf(float x) { return std::cos(x); }
EMU_TYPES_INLINE_ float __tanf(float x) { return std::tan(x); }
EMU_TYPES_INLINE_ void __sincosf(float x, float* s, float* c) { *s = std::sin(x); *c = std::cos(x); }
EMU_TYPES_INLINE_ float __saturatef(float x) { return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f); }  // NaN -> 0

// ---- double-precision intrinsics ------------------------------------------
EMU_TYPES_INLINE_ double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
EMU_TYPES_INLINE_ double __dmul_rn(double a, double b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) * fp_opaque(b));
}
EMU_TYPES_INLINE_ double __dadd_rn(double a, double b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) + fp_opaque(b));
}
EMU_TYPES_INLINE_ double __dsub_rn(double a, double b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) - fp_opaque(b));
}
EMU_TYPES_INLINE_ double __ddiv_rn(double a, double b) {
    using emu::detail::fp_opaque;
    return fp_opaque(fp_opaque(a) / fp_opaque(b));
}
EMU_TYPES_INLINE_ double __drcp_rn(double x) { return 1.0 / x; }
EMU_TYPES_INLINE_ double __dsqrt_rn(double x) { return std::sqrt(x); }

// ---- integer intrinsics -----------------------------------------------------
EMU_TYPES_INLINE_ int __mul24(int x, int y) {
    // Sign-extend the low 24 bits of each operand; return the low 32 bits of
    // the (48-bit) product.
    const int sa = static_cast<int>(static_cast<unsigned>(x) << 8) >> 8;
    const int sb = static_cast<int>(static_cast<unsigned>(y) << 8) >> 8;
    return static_cast<int>(static_cast<unsigned>(static_cast<long long>(sa) * sb));
}
EMU_TYPES_INLINE_ unsigned int __umul24(unsigned int x, unsigned int y) {
    return (x & 0xFFFFFFu) * (y & 0xFFFFFFu);
}
EMU_TYPES_INLINE_ int __mulhi(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) * static_cast<long long>(y)) >> 32);
}
EMU_TYPES_INLINE_ unsigned int __umulhi(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) * y) >> 32);
}
namespace emu {
namespace detail {
__extension__ typedef __int128 int128_t;
__extension__ typedef unsigned __int128 uint128_t;
}  // namespace detail
}  // namespace emu
EMU_TYPES_INLINE_ long long __mul64hi(long long x, long long y) {
    using emu::detail::int128_t;
    return static_cast<long long>((static_cast<int128_t>(x) * static_cast<int128_t>(y)) >> 64);
}
EMU_TYPES_INLINE_ unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    using emu::detail::uint128_t;
    return static_cast<unsigned long long>(
        (static_cast<uint128_t>(x) * static_cast<uint128_t>(y)) >> 64);
}
EMU_TYPES_INLINE_ int __popc(unsigned int x) { return __builtin_popcount(x); }
EMU_TYPES_INLINE_ int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
EMU_TYPES_INLINE_ int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
EMU_TYPES_INLINE_ int __clzll(long long x) {
    return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
EMU_TYPES_INLINE_ int __ffs(int x) { return __builtin_ffs(x); }
EMU_TYPES_INLINE_ int __ffsll(long long x) { return __builtin_ffsll(x); }
EMU_TYPES_INLINE_ unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    return __builtin_bswap32(x);
}
EMU_TYPES_INLINE_ unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) |
           __brev(static_cast<unsigned>(x >> 32));
}
// result byte n = byte selector[n] of the 8-byte pool {y:x}, where pool bytes
// 0-3 are x and 4-7 are y, and selector[n] = (s >> 4n) & 7 (documented
// semantics; the msb of each selector nibble is ignored).
EMU_TYPES_INLINE_ unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    const unsigned long long pool = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned int r = 0;
    for (int n = 0; n < 4; ++n) {
        const unsigned sel = (s >> (4 * n)) & 7u;
        r |= static_cast<unsigned int>((pool >> (8 * sel)) & 0xFFu) << (8 * n);
    }
    return r;
}
EMU_TYPES_INLINE_ unsigned int __sad(int x, int y, unsigned int z) {
    const unsigned d = x > y ? static_cast<unsigned>(x) - static_cast<unsigned>(y)
                             : static_cast<unsigned>(y) - static_cast<unsigned>(x);
    return d + z;
}
EMU_TYPES_INLINE_ unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) {
    return (x > y ? x - y : y - x) + z;
}
EMU_TYPES_INLINE_ int __hadd(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) + y) >> 1);
}
EMU_TYPES_INLINE_ int __rhadd(int x, int y) {
    return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1);
}
EMU_TYPES_INLINE_ unsigned int __uhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y) >> 1);
}
EMU_TYPES_INLINE_ unsigned int __urhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
EMU_TYPES_INLINE_ unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift & 31u)) >> 32);
}
EMU_TYPES_INLINE_ unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift < 32u ? shift : 32u)) >> 32);
}
EMU_TYPES_INLINE_ unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift & 31u));
}
EMU_TYPES_INLINE_ unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift < 32u ? shift : 32u));
}
EMU_TYPES_INLINE_ int __dp4a(int a, int b, int c) {
    int r = c;
    for (int i = 0; i < 4; ++i) {
        const int ai = static_cast<signed char>(static_cast<unsigned>(a) >> (8 * i));
        const int bi = static_cast<signed char>(static_cast<unsigned>(b) >> (8 * i));
        r = static_cast<int>(static_cast<unsigned>(r) + static_cast<unsigned>(ai * bi));
    }
    return r;
}
EMU_TYPES_INLINE_ unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    unsigned int r = c;
    for (int i = 0; i < 4; ++i) r += ((a >> (8 * i)) & 0xFFu) * ((b >> (8 * i)) & 0xFFu);
    return r;
}

EMU_TYPES_INLINE_ int __dp4a(char4 a, char4 b, int c) {
    return c + a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
EMU_TYPES_INLINE_ unsigned int __dp4a(uchar4 a, uchar4 b, unsigned int c) {
    return c + static_cast<unsigned>(a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w);
}

// ---- conversions ------------------------------------------------------------
// Float -> integer conversions saturate like the GPU (NaN -> 0).
#define EMU_F2I(SRC, SRCT, DST, DSTT)                                                     \
    EMU_TYPES_INLINE_ DSTT __##SRC##2##DST##_rn(SRCT x) {                                        \
        return emu::detail::sat_to_int<DSTT>(emu::detail::round_half_even(x));            \
    }                                                                                     \
    EMU_TYPES_INLINE_ DSTT __##SRC##2##DST##_rz(SRCT x) { return emu::detail::sat_to_int<DSTT>(std::trunc(x)); } \
    EMU_TYPES_INLINE_ DSTT __##SRC##2##DST##_ru(SRCT x) { return emu::detail::sat_to_int<DSTT>(std::ceil(x)); }  \
    EMU_TYPES_INLINE_ DSTT __##SRC##2##DST##_rd(SRCT x) { return emu::detail::sat_to_int<DSTT>(std::floor(x)); }
EMU_F2I(float, float, int, int)
EMU_F2I(float, float, uint, unsigned int)
EMU_F2I(float, float, ll, long long)
EMU_F2I(float, float, ull, unsigned long long)
EMU_F2I(double, double, int, int)
EMU_F2I(double, double, uint, unsigned int)
EMU_F2I(double, double, ll, long long)
EMU_F2I(double, double, ull, unsigned long long)
#undef EMU_F2I

// Integer -> floating conversions use the default (round-to-nearest) mode.
EMU_TYPES_INLINE_ float __int2float_rn(int x) { return static_cast<float>(x); }
EMU_TYPES_INLINE_ float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
EMU_TYPES_INLINE_ float __ll2float_rn(long long x) { return static_cast<float>(x); }
EMU_TYPES_INLINE_ float __ull2float_rn(unsigned long long x) { return static_cast<float>(x); }
EMU_TYPES_INLINE_ double __int2double_rn(int x) { return static_cast<double>(x); }
EMU_TYPES_INLINE_ double __uint2double_rn(unsigned int x) { return static_cast<double>(x); }
EMU_TYPES_INLINE_ double __ll2double_rn(long long x) { return static_cast<double>(x); }
EMU_TYPES_INLINE_ double __ull2double_rn(unsigned long long x) { return static_cast<double>(x); }
EMU_TYPES_INLINE_ float __double2float_rn(double x) { return static_cast<float>(x); }

// Bit casts.
EMU_TYPES_INLINE_ int __float_as_int(float x) { return emu::detail::bit_cast<int>(x); }
EMU_TYPES_INLINE_ float __int_as_float(int x) { return emu::detail::bit_cast<float>(x); }
EMU_TYPES_INLINE_ unsigned int __float_as_uint(float x) { return emu::detail::bit_cast<unsigned int>(x); }
EMU_TYPES_INLINE_ float __uint_as_float(unsigned int x) { return emu::detail::bit_cast<float>(x); }
EMU_TYPES_INLINE_ long long __double_as_longlong(double x) { return emu::detail::bit_cast<long long>(x); }
EMU_TYPES_INLINE_ double __longlong_as_double(long long x) { return emu::detail::bit_cast<double>(x); }
EMU_TYPES_INLINE_ int __double2hiint(double x) {
    return static_cast<int>(static_cast<unsigned long long>(__double_as_longlong(x)) >> 32);
}
EMU_TYPES_INLINE_ int __double2loint(double x) {
    return static_cast<int>(static_cast<unsigned int>(
        static_cast<unsigned long long>(__double_as_longlong(x))));
}
EMU_TYPES_INLINE_ double __hiloint2double(int hi, int lo) {
    return __longlong_as_double(static_cast<long long>(
        (static_cast<unsigned long long>(static_cast<unsigned int>(hi)) << 32) |
        static_cast<unsigned int>(lo)));
}

// ---- min / max ----------------------------------------------------------------
// CUDA's unqualified overloads of min/max (crt/math_functions.hpp), and only
// those: plain functions (so they beat std::min/std::max under `using namespace
// std`), no template, so that a mix CUDA finds ambiguous (int with float, int
// with size_t) is ambiguous here too and a file's own min/max template meets
// the same overloads it does under nvcc. A mixed pair converts both operands to
// the result type first, as CUDA does. Floating results use fmin/fmax semantics
// (a NaN operand yields the other operand).
#define EMU_MINMAX_INT(R, A, B)                                                        \
    EMU_TYPES_INLINE_ R min(A a, B b) { return static_cast<R>(b) < static_cast<R>(a) ? static_cast<R>(b) : static_cast<R>(a); } \
    EMU_TYPES_INLINE_ R max(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(b) : static_cast<R>(a); }
EMU_MINMAX_INT(int, int, int)
EMU_MINMAX_INT(unsigned int, unsigned int, unsigned int)
EMU_MINMAX_INT(unsigned int, int, unsigned int)
EMU_MINMAX_INT(unsigned int, unsigned int, int)
EMU_MINMAX_INT(long int, long int, long int)
EMU_MINMAX_INT(unsigned long int, unsigned long int, unsigned long int)
EMU_MINMAX_INT(unsigned long int, long int, unsigned long int)
EMU_MINMAX_INT(unsigned long int, unsigned long int, long int)
EMU_MINMAX_INT(long long int, long long int, long long int)
EMU_MINMAX_INT(unsigned long long int, unsigned long long int, unsigned long long int)
EMU_MINMAX_INT(unsigned long long int, long long int, unsigned long long int)
EMU_MINMAX_INT(unsigned long long int, unsigned long long int, long long int)
#undef EMU_MINMAX_INT
#define EMU_MINMAX_FLOAT(R, A, B)                                                      \
    EMU_TYPES_INLINE_ R min(A a, B b) { return emu::detail::nan_min<R>(a, b); }         \
    EMU_TYPES_INLINE_ R max(A a, B b) { return emu::detail::nan_max<R>(a, b); }
EMU_MINMAX_FLOAT(float, float, float)
EMU_MINMAX_FLOAT(double, double, double)
EMU_MINMAX_FLOAT(double, float, double)
EMU_MINMAX_FLOAT(double, double, float)
#undef EMU_MINMAX_FLOAT

// CUDA's explicitly named integer forms.
EMU_TYPES_INLINE_ unsigned int umin(unsigned int a, unsigned int b) { return b < a ? b : a; }
EMU_TYPES_INLINE_ unsigned int umax(unsigned int a, unsigned int b) { return a < b ? b : a; }
EMU_TYPES_INLINE_ long long llmin(long long a, long long b) { return b < a ? b : a; }
EMU_TYPES_INLINE_ long long llmax(long long a, long long b) { return a < b ? b : a; }
EMU_TYPES_INLINE_ unsigned long long ullmin(unsigned long long a, unsigned long long b) { return b < a ? b : a; }
EMU_TYPES_INLINE_ unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a < b ? b : a; }

// ---------------------------------------------------------------------------
// 4. Cache-hinted loads and stores: plain memory accesses on the CPU.
// ---------------------------------------------------------------------------
// One overload per type CUDA lists (sm_32_intrinsics.h; cuda_fp16.h adds __half
// and __half2), not a template: `__ldg` of a struct is an error under nvcc, and
// a file may define its own fallback template of the name.
#define EMU_CACHE_HINTS(T)                                                     \
    EMU_TYPES_INLINE_ T __ldg(const T* p) { return *p; }                       \
    EMU_TYPES_INLINE_ T __ldcg(const T* p) { return *p; }                      \
    EMU_TYPES_INLINE_ T __ldca(const T* p) { return *p; }                      \
    EMU_TYPES_INLINE_ T __ldcs(const T* p) { return *p; }                      \
    EMU_TYPES_INLINE_ T __ldlu(const T* p) { return *p; }                      \
    EMU_TYPES_INLINE_ T __ldcv(const T* p) { return *p; }                      \
    EMU_TYPES_INLINE_ void __stwb(T* p, T v) { *p = v; }                       \
    EMU_TYPES_INLINE_ void __stcg(T* p, T v) { *p = v; }                       \
    EMU_TYPES_INLINE_ void __stcs(T* p, T v) { *p = v; }                       \
    EMU_TYPES_INLINE_ void __stwt(T* p, T v) { *p = v; }
EMU_CACHE_HINTS(char)
EMU_CACHE_HINTS(signed char)
EMU_CACHE_HINTS(unsigned char)
EMU_CACHE_HINTS(short)
EMU_CACHE_HINTS(unsigned short)
EMU_CACHE_HINTS(int)
EMU_CACHE_HINTS(unsigned int)
EMU_CACHE_HINTS(long)
EMU_CACHE_HINTS(unsigned long)
EMU_CACHE_HINTS(long long)
EMU_CACHE_HINTS(unsigned long long)
EMU_CACHE_HINTS(float)
EMU_CACHE_HINTS(double)
EMU_CACHE_HINTS(char2)
EMU_CACHE_HINTS(char4)
EMU_CACHE_HINTS(uchar2)
EMU_CACHE_HINTS(uchar4)
EMU_CACHE_HINTS(short2)
EMU_CACHE_HINTS(short4)
EMU_CACHE_HINTS(ushort2)
EMU_CACHE_HINTS(ushort4)
EMU_CACHE_HINTS(int2)
EMU_CACHE_HINTS(int4)
EMU_CACHE_HINTS(uint2)
EMU_CACHE_HINTS(uint4)
EMU_CACHE_HINTS(longlong2)
EMU_CACHE_HINTS(ulonglong2)
EMU_CACHE_HINTS(float2)
EMU_CACHE_HINTS(float4)
EMU_CACHE_HINTS(double2)
#undef EMU_CACHE_HINTS

// ---------------------------------------------------------------------------
// 5. Atomics and fences.
// ---------------------------------------------------------------------------
// All operations are sequentially consistent read-modify-writes (on x86-64 a
// locked instruction either way) and return the old value. Floating-point
// operations use a compare-exchange loop on the object representation, so a
// NaN in memory cannot make the loop spin.
namespace emu {
namespace detail {

template <class T, class F>
EMU_TYPES_INLINE_ T atomic_update(T* addr, F f) {
    T old;
    __atomic_load(addr, &old, __ATOMIC_RELAXED);
    T desired;
    do {
        desired = f(old);
    } while (!__atomic_compare_exchange(addr, &old, &desired, /*weak=*/true,
                                        __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}

template <class T>
EMU_TYPES_INLINE_ T atomic_cas(T* addr, T compare, T val) {
    __atomic_compare_exchange(addr, &compare, &val, /*weak=*/false,
                              __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;  // the old value whether or not the exchange happened
}

template <class T>
EMU_TYPES_INLINE_ T atomic_exchange(T* addr, T val) {
    T old;
    __atomic_exchange(addr, &val, &old, __ATOMIC_SEQ_CST);
    return old;
}

}  // namespace detail
}  // namespace emu

// CUDA's atomics for exactly the types CUDA 13 declares them for
// (device_atomic_functions.h, sm_20/32/60 atomic_functions.h, crt/sm_70_rt.h,
// crt/sm_90_rt.h), each with its _block and _system scope where CUDA has one
// (on the CPU every atomic is already system-wide). No other overload: CUDA has
// no atomicMax(float*, float), so LeetGPU answers define their own with
// atomicCAS and __float_as_int, which an extra overload here would make a
// redefinition.
#define EMU_ATOMIC(T, NAME, OLD)                                               \
    EMU_TYPES_INLINE_ T NAME(T* a, T v) { return OLD; }                        \
    EMU_TYPES_INLINE_ T NAME##_block(T* a, T v) { return NAME(a, v); }         \
    EMU_TYPES_INLINE_ T NAME##_system(T* a, T v) { return NAME(a, v); }
#define EMU_ATOMIC_UPDATE(T, NAME, NEW)                                        \
    EMU_ATOMIC(T, NAME, emu::detail::atomic_update(a, [v](T o) { return NEW; }))

// atomicAdd / atomicSub
EMU_ATOMIC(int, atomicAdd, __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC(unsigned int, atomicAdd, __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC(unsigned long long, atomicAdd, __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC_UPDATE(float, atomicAdd, o + v)
EMU_ATOMIC_UPDATE(double, atomicAdd, o + v)
// sm_90 vector float atomics: atomic per element, as documented by CUDA.
EMU_ATOMIC(float2, atomicAdd, (float2{atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y)}))
EMU_ATOMIC(float4, atomicAdd, (float4{atomicAdd(&a->x, v.x), atomicAdd(&a->y, v.y), atomicAdd(&a->z, v.z),
                                      atomicAdd(&a->w, v.w)}))
EMU_ATOMIC(int, atomicSub, __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC(unsigned int, atomicSub, __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST))

// atomicExch
EMU_ATOMIC(int, atomicExch, __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC(unsigned int, atomicExch, __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC(unsigned long long, atomicExch, __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC(float, atomicExch, emu::detail::atomic_exchange(a, v))

// atomicMin / atomicMax: integers only
#define EMU_ATOMIC_MINMAX(T)                                                   \
    EMU_ATOMIC_UPDATE(T, atomicMin, v < o ? v : o)                             \
    EMU_ATOMIC_UPDATE(T, atomicMax, o < v ? v : o)
EMU_ATOMIC_MINMAX(int)
EMU_ATOMIC_MINMAX(unsigned int)
EMU_ATOMIC_MINMAX(long long)
EMU_ATOMIC_MINMAX(unsigned long long)
#undef EMU_ATOMIC_MINMAX

// atomicCAS (unsigned short: sm_70, no scoped forms)
#define EMU_ATOMIC_CAS(T)                                                      \
    EMU_TYPES_INLINE_ T atomicCAS(T* a, T compare, T val) { return emu::detail::atomic_cas(a, compare, val); } \
    EMU_TYPES_INLINE_ T atomicCAS_block(T* a, T compare, T val) { return atomicCAS(a, compare, val); }         \
    EMU_TYPES_INLINE_ T atomicCAS_system(T* a, T compare, T val) { return atomicCAS(a, compare, val); }
EMU_ATOMIC_CAS(int)
EMU_ATOMIC_CAS(unsigned int)
EMU_ATOMIC_CAS(unsigned long long)
#undef EMU_ATOMIC_CAS
EMU_TYPES_INLINE_ unsigned short atomicCAS(unsigned short* a, unsigned short compare, unsigned short val) {
    return emu::detail::atomic_cas(a, compare, val);
}

// atomicAnd / atomicOr / atomicXor
#define EMU_ATOMIC_BITS(T)                                                     \
    EMU_ATOMIC(T, atomicAnd, __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST))       \
    EMU_ATOMIC(T, atomicOr, __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST))         \
    EMU_ATOMIC(T, atomicXor, __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST))
EMU_ATOMIC_BITS(int)
EMU_ATOMIC_BITS(unsigned int)
EMU_ATOMIC_BITS(long long)
EMU_ATOMIC_BITS(unsigned long long)
#undef EMU_ATOMIC_BITS

// atomicInc / atomicDec (CUDA's wrap-around semantics)
EMU_ATOMIC_UPDATE(unsigned int, atomicInc, o >= v ? 0u : o + 1u)
EMU_ATOMIC_UPDATE(unsigned int, atomicDec, (o == 0u || o > v) ? v : o - 1u)
#undef EMU_ATOMIC_UPDATE
#undef EMU_ATOMIC

EMU_TYPES_INLINE_ void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
EMU_TYPES_INLINE_ void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
EMU_TYPES_INLINE_ void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---------------------------------------------------------------------------
// 6. Miscellaneous.
// ---------------------------------------------------------------------------
// __nanosleep (sm_70): a hint that the thread may wait about that long; CUDA promises no length, so here
// it waits none (a spin loop around it polls as it would without it).
EMU_TYPES_INLINE_ void __nanosleep(unsigned int) {}
[[noreturn]] EMU_TYPES_INLINE_ void __trap() { __builtin_trap(); }
[[noreturn]] EMU_TYPES_INLINE_ void __brkpt() { __builtin_trap(); }

// clock() is left as the C library's. clock64() returns steady-clock
// nanoseconds: non-decreasing and consistent across OS threads.
EMU_TYPES_INLINE_ long long clock64() {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now().time_since_epoch())
                                      .count());
}

#undef EMU_TYPES_INLINE_

