// emu_lowp.h -- what cuda_fp16.h and cuda_bf16.h share: the 16-bit floating-point formats.
//
// A __half (IEEE binary16: 10 stored significand bits, 5 exponent bits) or __nv_bfloat16 (7 and 8) is
// stored as its bits. Every operation computes the exact result in double and rounds it ONCE to the
// 16-bit format, which is what a GPU gives (tests/test_gpu_types.py compares the two bit for bit):
//
//   * +, -, * of two 16-bit values are exact in double; a quotient or a square root rounded to double
//     and then to 16 bits is still correctly rounded (double has more than 2 * 11 + 2 bits);
//   * a fused multiply-add keeps what double drops (a TwoSum), so a tie is broken the right way;
//   * a math function (hexp, hsin, ...) is the double libm value rounded once: CUDA's own are
//     correctly rounded on every 16-bit input (checked on an H200), except the tanh.approx hardware
//     approximation behind htanh_approx, which may be one unit in the last place away.
//
// A NaN result is the canonical NaN, 0x7fff, as on the GPU (a negated or absolute NaN too); only a
// double NaN converts keeping its sign and the top of its payload, quieted. Float-to-integer
// conversions saturate; NaN gives 0, or 0x8000000000000000 for the 64-bit ones.
//
// Everything here lives in namespace emu: the global names are the two CUDA headers'. The EMU_LOWP_*
// macros stamp out the functions CUDA declares with the same signatures for both types.
#pragma once
#include "cuda_emu.h"

namespace emu {
namespace detail {

enum Rounding { kNearest, kTowardZero, kDown, kUp };

inline double bits_as_double(unsigned long long bits) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
}

// 2^k as a double, for k within the normal range (exact, no libm call).
inline double power_of_two(int k) {
    return bits_as_double(static_cast<unsigned long long>(k + 1023) << 52);
}

// The value of a 16-bit pattern of a format with M stored significand bits and E exponent bits.
template <int M, int E>
inline double decode(unsigned short bits) {
    constexpr int bias = (1 << (E - 1)) - 1;
    const unsigned exponent = (bits >> M) & ((1u << E) - 1u), significand = bits & ((1u << M) - 1u);
    const unsigned long long sign = static_cast<unsigned long long>(bits >> 15) << 63;
    if (exponent == (1u << E) - 1u)  // infinity or NaN
        return bits_as_double(sign | 0x7ff0000000000000ull | (significand ? 0x8000000000000ull : 0));
    if (exponent == 0) {  // zero or subnormal: significand units of 2^(1 - bias - M), exact in double
        const double magnitude = static_cast<double>(significand) * power_of_two(1 - bias - M);
        return sign ? -magnitude : magnitude;
    }
    return bits_as_double(sign | static_cast<unsigned long long>(static_cast<int>(exponent) - bias + 1023) << 52 |
                          static_cast<unsigned long long>(significand) << (52 - M));
}

// x + residual rounded once to the format (M, E); residual is what a double could not hold of the
// true value, too small to move it past a neighbour: it breaks a tie and says on which side of a
// representable x the true value lies. A NaN gives the canonical 0x7fff.
template <int M, int E>
inline unsigned short encode(double x, Rounding mode = kNearest, double residual = 0.0) {
    constexpr int bias = (1 << (E - 1)) - 1;
    constexpr unsigned infinity = ((1u << E) - 1u) << M;
    unsigned long long raw;
    std::memcpy(&raw, &x, 8);
    const bool negative = raw >> 63;
    const unsigned sign = negative ? 0x8000u : 0u;
    raw &= 0x7fffffffffffffffull;
    if (raw > 0x7ff0000000000000ull) return 0x7fff;
    if (raw == 0x7ff0000000000000ull) return static_cast<unsigned short>(sign | infinity);
    const bool away = (mode == kUp && !negative) || (mode == kDown && negative);
    int exponent = static_cast<int>(raw >> 52) - 1023;  // magnitude in [2^exponent, 2^(exponent + 1))
    if (exponent < 1 - bias) exponent = 1 - bias;      // subnormals share the smallest normal's step
    unsigned result;
    if (exponent > bias) {  // at or past 2^(bias + 1): past the largest finite value
        result = infinity;
    } else {
        const double scaled = bits_as_double(raw) * power_of_two(M - exponent);  // exact, below 2^(M + 1)
        const unsigned steps = static_cast<unsigned>(scaled);
        const double fraction = scaled - steps;  // exact
        const int side = negative ? -(residual > 0) + (residual < 0) : (residual > 0) - (residual < 0);
        result = (static_cast<unsigned>(exponent + bias - 1) << M) + steps;  // carries into the exponent
        if (mode == kNearest) {
            result += fraction > 0.5 || (fraction == 0.5 && (side > 0 || (side == 0 && (steps & 1u))));
        } else if (away) {
            result += fraction > 0 || (fraction == 0 && side > 0);
        } else if (fraction == 0 && side < 0 && result > 0) {
            result -= 1;  // truly a little below a representable magnitude: the one under it
        }
    }
    if (result >= infinity) result = (mode == kNearest || away) ? infinity : infinity - 1;
    return static_cast<unsigned short>(sign | result);
}

// An integer's value as a double and what the double dropped of it (past 2^53).
template <class I>
inline double integer_value(I i, double& residual) {
    const double near = static_cast<double>(i);
    residual = (sizeof(I) <= 4) ? 0.0 : static_cast<double>(static_cast<int128_t>(i) - static_cast<int128_t>(near));
    return near;
}

// The 16-bit types' traits: their format and how to reach their bits (each header specialises it).
template <class T>
struct LowPrecision;

template <class T>
inline unsigned short lowp_bits(T v) {
    return static_cast<typename LowPrecision<T>::Raw>(v).x;
}
template <class T>
inline T lowp_from_bits(unsigned short bits) {
    typename LowPrecision<T>::Raw raw;
    raw.x = bits;
    return T(raw);
}
template <class T>
inline double value_of(T v) {
    return decode<LowPrecision<T>::kMantissa, LowPrecision<T>::kExponent>(lowp_bits(v));
}
template <class T>
inline unsigned short round_bits(double x, Rounding mode = kNearest, double residual = 0.0) {
    return encode<LowPrecision<T>::kMantissa, LowPrecision<T>::kExponent>(x, mode, residual);
}
template <class T>
inline T round_to(double x, Rounding mode = kNearest, double residual = 0.0) {
    return lowp_from_bits<T>(round_bits<T>(x, mode, residual));
}
template <class T>
inline bool is_nan(T v) {
    constexpr unsigned infinity = ((1u << LowPrecision<T>::kExponent) - 1u) << LowPrecision<T>::kMantissa;
    return (lowp_bits(v) & 0x7fffu) > infinity;
}
template <int M, int E, class I>
inline unsigned short integer_bits(I i, Rounding mode = kNearest) {
    double residual;
    const double near = integer_value(i, residual);
    return encode<M, E>(near, mode, residual);
}
template <class T, class I>
inline T from_integer(I i, Rounding mode) {
    return lowp_from_bits<T>(integer_bits<LowPrecision<T>::kMantissa, LowPrecision<T>::kExponent>(i, mode));
}
// x rounded to an integral value in `mode` and saturated to I's range (cvt.rni/rzi/rmi/rpi).
template <class I>
inline I integer_of(double x, Rounding mode, I nan = I(0)) {
    if (x != x) return nan;
    const double r = mode == kNearest ? round_half_even(x) : mode == kTowardZero ? std::trunc(x)
                   : mode == kDown ? std::floor(x) : std::ceil(x);
    return sat_to_int<I>(r);
}
template <class I, class T>
inline I to_integer(T v, Rounding mode, I nan = I(0)) {
    return integer_of<I>(value_of(v), mode, nan);
}
// The float a 16-bit value widens to, exactly: a half NaN becomes the canonical float NaN
// (cvt.f32.f16), a bfloat16 is its bits shifted up (NaN payload and sign kept).
inline float widen_half(unsigned short bits) {
    if ((bits & 0x7fffu) > 0x7c00u) return bit_cast<float>(0x7fffffffu);
    return static_cast<float>(decode<10, 5>(bits));
}
inline float widen_bfloat16(unsigned short bits) {
    return bit_cast<float>(static_cast<unsigned>(bits) << 16);
}
// A double rounded once (cvt.rn.f16.f64 / cvt.rn.bf16.f64). Unlike every other operation, this
// conversion keeps a NaN's sign and the top of its payload, quieted (not the canonical 0x7fff).
template <int M, int E>
inline unsigned short from_double_bits(double x) {
    if (x == x) return encode<M, E>(x);
    unsigned long long raw;
    std::memcpy(&raw, &x, 8);
    const unsigned payload = static_cast<unsigned>((raw & 0xfffffffffffffull) >> (52 - M));
    return static_cast<unsigned short>((raw >> 63) << 15 | ((1u << E) - 1u) << M | 1u << (M - 1) | payload);
}
template <class T>
inline float to_float(T v) {
    return LowPrecision<T>::kMantissa == 7 ? widen_bfloat16(lowp_bits(v)) : widen_half(lowp_bits(v));
}

// ---- arithmetic: the exact result, rounded once
template <class T>
inline T add(T a, T b) { return round_to<T>(value_of(a) + value_of(b)); }
template <class T>
inline T sub(T a, T b) { return round_to<T>(value_of(a) - value_of(b)); }
template <class T>
inline T mul(T a, T b) { return round_to<T>(value_of(a) * value_of(b)); }
template <class T>
inline T div(T a, T b) { return round_to<T>(value_of(a) / value_of(b)); }
template <class T>
inline T fma(T a, T b, T c) {
    const double product = fp_opaque(value_of(a) * value_of(b));  // exact: at most 22 significant bits
    const double addend = value_of(c), sum = fp_opaque(product + addend);
    double residual = 0.0;
    if (std::isfinite(sum)) {  // TwoSum: exactly what the double sum dropped
        const double part = fp_opaque(sum - product);
        residual = fp_opaque(product - fp_opaque(sum - part)) + fp_opaque(addend - part);
    }
    return round_to<T>(sum, kNearest, residual);
}
template <class T>
inline T negate(T a) { return is_nan(a) ? lowp_from_bits<T>(0x7fff) : lowp_from_bits<T>(lowp_bits(a) ^ 0x8000u); }
template <class T>
inline T absolute(T a) { return is_nan(a) ? lowp_from_bits<T>(0x7fff) : lowp_from_bits<T>(lowp_bits(a) & 0x7fffu); }
// _sat: clamped to [+0, 1]; NaN gives +0
template <class T>
inline T saturate(T r) {
    const double x = value_of(r);
    return x > 1.0 ? round_to<T>(1.0) : x > 0.0 ? r : lowp_from_bits<T>(0);
}
// _relu: a negative result or -0 becomes +0; NaN stays the canonical NaN
template <class T>
inline T relu(T r) { return is_nan(r) || value_of(r) > 0.0 ? r : lowp_from_bits<T>(0); }
// __hmax / __hmin: a NaN operand is ignored (both NaN: the canonical NaN), +0 counts above -0;
// the _nan forms give the canonical NaN when either is NaN
template <class T>
inline T maximum(T a, T b, bool nan_wins) {
    if (is_nan(a) || is_nan(b))
        return (nan_wins || (is_nan(a) && is_nan(b))) ? lowp_from_bits<T>(0x7fff) : is_nan(a) ? b : a;
    const double x = value_of(a), y = value_of(b);
    return x > y ? a : y > x ? b : std::signbit(x) ? b : a;
}
template <class T>
inline T minimum(T a, T b, bool nan_wins) {
    if (is_nan(a) || is_nan(b))
        return (nan_wins || (is_nan(a) && is_nan(b))) ? lowp_from_bits<T>(0x7fff) : is_nan(a) ? b : a;
    const double x = value_of(a), y = value_of(b);
    return x < y ? a : y < x ? b : std::signbit(x) ? a : b;
}
template <class T, class F>
inline T math(T a, F f) { return round_to<T>(f(value_of(a))); }

// ---- comparisons: ordered ones are false on a NaN, the unordered (..u) ones true
enum Comparison { kEq, kNe, kLe, kGe, kLt, kGt, kEqu, kNeu, kLeu, kGeu, kLtu, kGtu };
template <class T>
inline bool compare(T a, T b, Comparison c) {
    const double x = value_of(a), y = value_of(b);
    const bool unordered = x != x || y != y;
    switch (c) {
        case kEq: return x == y;
        case kNe: return !unordered && x != y;
        case kLe: return x <= y;
        case kGe: return x >= y;
        case kLt: return x < y;
        case kGt: return x > y;
        case kEqu: return unordered || x == y;
        case kNeu: return x != y;
        case kLeu: return unordered || x <= y;
        case kGeu: return unordered || x >= y;
        case kLtu: return unordered || x < y;
        case kGtu: return unordered || x > y;
    }
    return false;
}
// the packed forms: 1.0 or 0.0 in each lane, or 0xffff or 0 in each 16-bit half of a mask
template <class T2>
inline T2 compare2(T2 a, T2 b, Comparison c) {
    using T = decltype(a.x);
    const T one = round_to<T>(1.0), zero = lowp_from_bits<T>(0);
    return T2(compare(a.x, b.x, c) ? one : zero, compare(a.y, b.y, c) ? one : zero);
}
template <class T2>
inline unsigned compare2_mask(T2 a, T2 b, Comparison c) {
    return (compare(a.x, b.x, c) ? 0xffffu : 0u) | (compare(a.y, b.y, c) ? 0xffff0000u : 0u);
}
template <class T2>
inline bool compare2_both(T2 a, T2 b, Comparison c) { return compare(a.x, b.x, c) && compare(a.y, b.y, c); }

}  // namespace detail
}  // namespace emu

// The functions CUDA declares alike for T (a 16-bit type) and T2 (its pair): arithmetic, comparisons,
// math, min/max, rounding to integral values, the pair shuffles, cache-hinted loads and stores,
// atomicAdd. `S` and `S2` spell the type in the names that differ (__float2half, __float2bfloat16).
#define EMU_LOWP_LANES(T2, EXPR_X, EXPR_Y) return T2((EXPR_X), (EXPR_Y))

#define EMU_LOWP_FUNCTIONS(T, T2, S, S2)                                                                         \
    /* conversions from float, double and integers */                                                           \
    inline T __float2##S(const float a) { return ::emu::detail::round_to<T>(a); }                               \
    inline T __float2##S##_rn(const float a) { return ::emu::detail::round_to<T>(a); }                          \
    inline T __float2##S##_rz(const float a) { return ::emu::detail::round_to<T>(a, ::emu::detail::kTowardZero); } \
    inline T __float2##S##_rd(const float a) { return ::emu::detail::round_to<T>(a, ::emu::detail::kDown); }     \
    inline T __float2##S##_ru(const float a) { return ::emu::detail::round_to<T>(a, ::emu::detail::kUp); }       \
    inline T __double2##S(const double a) {                                                                      \
        return ::emu::detail::lowp_from_bits<T>(::emu::detail::from_double_bits<::emu::detail::LowPrecision<T>::kMantissa, \
                                                                           ::emu::detail::LowPrecision<T>::kExponent>(a)); \
    }                          \
    inline float __##S##2float(const T a) { return ::emu::detail::to_float(a); }                                \
    inline T2 __float2##S2##_rn(const float a) { return T2(__float2##S##_rn(a), __float2##S##_rn(a)); }         \
    inline T2 __floats2##S2##_rn(const float a, const float b) { return T2(__float2##S##_rn(a), __float2##S##_rn(b)); } \
    inline T2 __float22##S2##_rn(const float2 a) { return __floats2##S2##_rn(a.x, a.y); }                       \
    inline float __low2float(const T2 a) { return ::emu::detail::to_float(a.x); }                               \
    inline float __high2float(const T2 a) { return ::emu::detail::to_float(a.y); }                              \
    inline float2 __##S2##2float2(const T2 a) { return make_float2(__low2float(a), __high2float(a)); }          \
    EMU_LOWP_FROM_INTEGER(T, S, int, int)                                                                        \
    EMU_LOWP_FROM_INTEGER(T, S, uint, unsigned int)                                                              \
    EMU_LOWP_FROM_INTEGER(T, S, short, short int)                                                                \
    EMU_LOWP_FROM_INTEGER(T, S, ushort, unsigned short int)                                                      \
    EMU_LOWP_FROM_INTEGER(T, S, ll, long long int)                                                               \
    EMU_LOWP_FROM_INTEGER(T, S, ull, unsigned long long int)                                                     \
    /* conversions to integers: saturating, NaN gives 0 (0x8000000000000000 for 64 bits) */                     \
    EMU_LOWP_TO_INTEGER(T, S, int, int, 0)                                                                       \
    EMU_LOWP_TO_INTEGER(T, S, uint, unsigned int, 0)                                                             \
    EMU_LOWP_TO_INTEGER(T, S, short, short int, 0)                                                               \
    EMU_LOWP_TO_INTEGER(T, S, ushort, unsigned short int, 0)                                                     \
    EMU_LOWP_TO_INTEGER(T, S, ll, long long int, -0x7fffffffffffffffll - 1)                                           \
    EMU_LOWP_TO_INTEGER(T, S, ull, unsigned long long int, 0x8000000000000000ull)                                \
    inline signed char __##S##2char_rz(const T h) {                                                              \
        return ::emu::detail::to_integer<signed char>(h, ::emu::detail::kTowardZero);                           \
    }                                                                                                            \
    inline unsigned char __##S##2uchar_rz(const T h) {                                                           \
        return ::emu::detail::to_integer<unsigned char>(h, ::emu::detail::kTowardZero);                         \
    }                                                                                                            \
    /* bits */                                                                                                   \
    inline short int __##S##_as_short(const T h) { return static_cast<short int>(::emu::detail::lowp_bits(h)); }   \
    inline unsigned short int __##S##_as_ushort(const T h) { return ::emu::detail::lowp_bits(h); }                 \
    inline T __short_as_##S(const short int i) { return ::emu::detail::lowp_from_bits<T>(static_cast<unsigned short>(i)); } \
    inline T __ushort_as_##S(const unsigned short int i) { return ::emu::detail::lowp_from_bits<T>(i); }              \
    /* packing and unpacking pairs */                                                                            \
    inline T2 make_##S2(const T x, const T y) { return T2(x, y); }                                               \
    inline T2 __halves2##S2(const T a, const T b) { return T2(a, b); }                                           \
    inline T2 __##S##2##S2(const T a) { return T2(a, a); }                                                       \
    inline T2 __lowhigh2highlow(const T2 a) { return T2(a.y, a.x); }                                             \
    inline T2 __lows2##S2(const T2 a, const T2 b) { return T2(a.x, b.x); }                                       \
    inline T2 __highs2##S2(const T2 a, const T2 b) { return T2(a.y, b.y); }                                      \
    inline T __low2##S(const T2 a) { return a.x; }                                                               \
    inline T __high2##S(const T2 a) { return a.y; }                                                              \
    inline T2 __low2##S2(const T2 a) { return T2(a.x, a.x); }                                                    \
    inline T2 __high2##S2(const T2 a) { return T2(a.y, a.y); }                                                   \
    /* classification */                                                                                         \
    inline bool __hisnan(const T a) { return ::emu::detail::is_nan(a); }                                        \
    inline T2 __hisnan2(const T2 a) {                                                                            \
        const T one = ::emu::detail::round_to<T>(1.0), zero = ::emu::detail::lowp_from_bits<T>(0);                  \
        return T2(__hisnan(a.x) ? one : zero, __hisnan(a.y) ? one : zero);                                       \
    }                                                                                                            \
    inline int __hisinf(const T a) {                                                                             \
        const double x = ::emu::detail::value_of(a);                                                             \
        return std::isinf(x) ? (x < 0 ? -1 : 1) : 0;                                                             \
    }                                                                                                            \
    /* arithmetic */                                                                                             \
    inline T __hadd(const T a, const T b) { return ::emu::detail::add(a, b); }                                  \
    inline T __hsub(const T a, const T b) { return ::emu::detail::sub(a, b); }                                  \
    inline T __hmul(const T a, const T b) { return ::emu::detail::mul(a, b); }                                  \
    inline T __hdiv(const T a, const T b) { return ::emu::detail::div(a, b); }                                  \
    inline T __hadd_rn(const T a, const T b) { return ::emu::detail::add(a, b); }                               \
    inline T __hsub_rn(const T a, const T b) { return ::emu::detail::sub(a, b); }                               \
    inline T __hmul_rn(const T a, const T b) { return ::emu::detail::mul(a, b); }                               \
    inline T __hadd_sat(const T a, const T b) { return ::emu::detail::saturate(__hadd(a, b)); }                 \
    inline T __hsub_sat(const T a, const T b) { return ::emu::detail::saturate(__hsub(a, b)); }                 \
    inline T __hmul_sat(const T a, const T b) { return ::emu::detail::saturate(__hmul(a, b)); }                 \
    inline T __hfma(const T a, const T b, const T c) { return ::emu::detail::fma(a, b, c); }                     \
    inline T __hfma_sat(const T a, const T b, const T c) { return ::emu::detail::saturate(__hfma(a, b, c)); }    \
    inline T __hfma_relu(const T a, const T b, const T c) { return ::emu::detail::relu(__hfma(a, b, c)); }       \
    inline T __hneg(const T a) { return ::emu::detail::negate(a); }                                             \
    inline T __habs(const T a) { return ::emu::detail::absolute(a); }                                           \
    inline T __hmax(const T a, const T b) { return ::emu::detail::maximum(a, b, false); }                       \
    inline T __hmin(const T a, const T b) { return ::emu::detail::minimum(a, b, false); }                       \
    inline T __hmax_nan(const T a, const T b) { return ::emu::detail::maximum(a, b, true); }                    \
    inline T __hmin_nan(const T a, const T b) { return ::emu::detail::minimum(a, b, true); }                    \
    inline T2 __hadd2(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hadd(a.x, b.x), __hadd(a.y, b.y)); }        \
    inline T2 __hsub2(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hsub(a.x, b.x), __hsub(a.y, b.y)); }        \
    inline T2 __hmul2(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hmul(a.x, b.x), __hmul(a.y, b.y)); }        \
    inline T2 __h2div(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hdiv(a.x, b.x), __hdiv(a.y, b.y)); }        \
    inline T2 __hadd2_rn(const T2 a, const T2 b) { return __hadd2(a, b); }                                       \
    inline T2 __hsub2_rn(const T2 a, const T2 b) { return __hsub2(a, b); }                                       \
    inline T2 __hmul2_rn(const T2 a, const T2 b) { return __hmul2(a, b); }                                       \
    inline T2 __hadd2_sat(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
    inline T2 __hsub2_sat(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)); } \
    inline T2 __hmul2_sat(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
    inline T2 __hfma2(const T2 a, const T2 b, const T2 c) {                                                      \
        EMU_LOWP_LANES(T2, __hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));                                        \
    }                                                                                                            \
    inline T2 __hfma2_sat(const T2 a, const T2 b, const T2 c) {                                                  \
        EMU_LOWP_LANES(T2, __hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y));                                \
    }                                                                                                            \
    inline T2 __hfma2_relu(const T2 a, const T2 b, const T2 c) {                                                 \
        EMU_LOWP_LANES(T2, __hfma_relu(a.x, b.x, c.x), __hfma_relu(a.y, b.y, c.y));                              \
    }                                                                                                            \
    /* (a.x + i a.y)(b.x + i b.y) + c as CUDA computes it: two fmas a lane */                                    \
    inline T2 __hcmadd(const T2 a, const T2 b, const T2 c) {                                                     \
        EMU_LOWP_LANES(T2, __hfma(__hneg(a.y), b.y, __hfma(a.x, b.x, c.x)), __hfma(a.y, b.x, __hfma(a.x, b.y, c.y))); \
    }                                                                                                            \
    inline T2 __hneg2(const T2 a) { EMU_LOWP_LANES(T2, __hneg(a.x), __hneg(a.y)); }                             \
    inline T2 __habs2(const T2 a) { EMU_LOWP_LANES(T2, __habs(a.x), __habs(a.y)); }                             \
    inline T2 __hmax2(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hmax(a.x, b.x), __hmax(a.y, b.y)); }        \
    inline T2 __hmin2(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hmin(a.x, b.x), __hmin(a.y, b.y)); }        \
    inline T2 __hmax2_nan(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)); } \
    inline T2 __hmin2_nan(const T2 a, const T2 b) { EMU_LOWP_LANES(T2, __hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)); } \
    /* comparisons */                                                                                            \
    EMU_LOWP_COMPARISON(T, T2, eq, kEq)                                                                          \
    EMU_LOWP_COMPARISON(T, T2, ne, kNe)                                                                          \
    EMU_LOWP_COMPARISON(T, T2, le, kLe)                                                                          \
    EMU_LOWP_COMPARISON(T, T2, ge, kGe)                                                                          \
    EMU_LOWP_COMPARISON(T, T2, lt, kLt)                                                                          \
    EMU_LOWP_COMPARISON(T, T2, gt, kGt)                                                                          \
    EMU_LOWP_COMPARISON(T, T2, equ, kEqu)                                                                        \
    EMU_LOWP_COMPARISON(T, T2, neu, kNeu)                                                                        \
    EMU_LOWP_COMPARISON(T, T2, leu, kLeu)                                                                        \
    EMU_LOWP_COMPARISON(T, T2, geu, kGeu)                                                                        \
    EMU_LOWP_COMPARISON(T, T2, ltu, kLtu)                                                                        \
    EMU_LOWP_COMPARISON(T, T2, gtu, kGtu)                                                                        \
    /* math: the exact value rounded once (integral roundings are exact) */                                      \
    EMU_LOWP_MATH(T, T2, sqrt, std::sqrt(x))                                                                     \
    EMU_LOWP_MATH(T, T2, rsqrt, 1.0 / std::sqrt(x))                                                              \
    EMU_LOWP_MATH(T, T2, rcp, 1.0 / x)                                                                           \
    EMU_LOWP_MATH(T, T2, exp, std::exp(x))                                                                       \
    EMU_LOWP_MATH(T, T2, exp2, std::exp2(x))                                                                     \
    EMU_LOWP_MATH(T, T2, exp10, std::pow(10.0, x))                                                               \
    EMU_LOWP_MATH(T, T2, log, std::log(x))                                                                       \
    EMU_LOWP_MATH(T, T2, log2, std::log2(x))                                                                     \
    EMU_LOWP_MATH(T, T2, log10, std::log10(x))                                                                   \
    EMU_LOWP_MATH(T, T2, sin, std::sin(x))                                                                       \
    EMU_LOWP_MATH(T, T2, cos, std::cos(x))                                                                       \
    EMU_LOWP_MATH(T, T2, tanh, std::tanh(x))                                                                     \
    EMU_LOWP_MATH(T, T2, tanh_approx, std::tanh(x))                                                              \
    EMU_LOWP_MATH(T, T2, trunc, std::trunc(x))                                                                   \
    EMU_LOWP_MATH(T, T2, ceil, std::ceil(x))                                                                     \
    EMU_LOWP_MATH(T, T2, floor, std::floor(x))                                                                   \
    EMU_LOWP_MATH(T, T2, rint, ::emu::detail::round_half_even(x))                                                \
    /* atomics: a compare-and-swap loop on the 16 or 32 bits */                                                  \
    inline T atomicAdd(T* const address, const T val) {                                                          \
        return ::emu::detail::atomic_update(address, [val](T old) { return __hadd(old, val); });                 \
    }                                                                                                            \
    inline T2 atomicAdd(T2* const address, const T2 val) {                                                       \
        return ::emu::detail::atomic_update(address, [val](T2 old) { return __hadd2(old, val); });               \
    }                                                                                                            \
    EMU_LOWP_MEMORY(T)                                                                                           \
    EMU_LOWP_MEMORY(T2)

#define EMU_LOWP_FROM_INTEGER(T, S, NAME, I)                                                                     \
    inline T __##NAME##2##S##_rn(const I i) { return ::emu::detail::from_integer<T>(i, ::emu::detail::kNearest); } \
    inline T __##NAME##2##S##_rz(const I i) { return ::emu::detail::from_integer<T>(i, ::emu::detail::kTowardZero); } \
    inline T __##NAME##2##S##_rd(const I i) { return ::emu::detail::from_integer<T>(i, ::emu::detail::kDown); }  \
    inline T __##NAME##2##S##_ru(const I i) { return ::emu::detail::from_integer<T>(i, ::emu::detail::kUp); }

#define EMU_LOWP_TO_INTEGER(T, S, NAME, I, NAN_VALUE)                                                            \
    inline I __##S##2##NAME##_rn(const T h) { return ::emu::detail::to_integer<I>(h, ::emu::detail::kNearest, NAN_VALUE); } \
    inline I __##S##2##NAME##_rz(const T h) {                                                                    \
        return ::emu::detail::to_integer<I>(h, ::emu::detail::kTowardZero, NAN_VALUE);                          \
    }                                                                                                            \
    inline I __##S##2##NAME##_rd(const T h) { return ::emu::detail::to_integer<I>(h, ::emu::detail::kDown, NAN_VALUE); } \
    inline I __##S##2##NAME##_ru(const T h) { return ::emu::detail::to_integer<I>(h, ::emu::detail::kUp, NAN_VALUE); }

#define EMU_LOWP_COMPARISON(T, T2, NAME, WHICH)                                                                  \
    inline bool __h##NAME(const T a, const T b) { return ::emu::detail::compare(a, b, ::emu::detail::WHICH); }    \
    inline T2 __h##NAME##2(const T2 a, const T2 b) { return ::emu::detail::compare2(a, b, ::emu::detail::WHICH); } \
    inline unsigned int __h##NAME##2_mask(const T2 a, const T2 b) {                                              \
        return ::emu::detail::compare2_mask(a, b, ::emu::detail::WHICH);                                         \
    }                                                                                                            \
    inline bool __hb##NAME##2(const T2 a, const T2 b) { return ::emu::detail::compare2_both(a, b, ::emu::detail::WHICH); }

#define EMU_LOWP_MATH(T, T2, NAME, EXPR)                                                                         \
    inline T h##NAME(const T a) { return ::emu::detail::math(a, [](double x) { return EXPR; }); }               \
    inline T2 h2##NAME(const T2 a) { EMU_LOWP_LANES(T2, h##NAME(a.x), h##NAME(a.y)); }

// CUDA's cache-hinted loads and stores and warp shuffles for the 16-bit types and their pairs.
#define EMU_LOWP_MEMORY(T)                                                                                       \
    inline T __ldg(const T* const ptr) { return *ptr; }                                                          \
    inline T __ldcg(const T* const ptr) { return *ptr; }                                                         \
    inline T __ldca(const T* const ptr) { return *ptr; }                                                         \
    inline T __ldcs(const T* const ptr) { return *ptr; }                                                         \
    inline T __ldlu(const T* const ptr) { return *ptr; }                                                         \
    inline T __ldcv(const T* const ptr) { return *ptr; }                                                         \
    inline void __stwb(T* const ptr, const T value) { *ptr = value; }                                            \
    inline void __stcg(T* const ptr, const T value) { *ptr = value; }                                            \
    inline void __stcs(T* const ptr, const T value) { *ptr = value; }                                            \
    inline void __stwt(T* const ptr, const T value) { *ptr = value; }                                            \
    inline T __shfl_sync(const unsigned int mask, const T var, const int srcLane, const int width = warpSize) {  \
        return ::emu::detail::shuffle(mask, ::emu::kShflIdx, var, srcLane, width);                              \
    }                                                                                                            \
    inline T __shfl_up_sync(const unsigned int mask, const T var, const unsigned int delta, const int width = warpSize) { \
        return ::emu::detail::shuffle(mask, ::emu::kShflUp, var, (int)delta, width);                            \
    }                                                                                                            \
    inline T __shfl_down_sync(const unsigned int mask, const T var, const unsigned int delta, const int width = warpSize) { \
        return ::emu::detail::shuffle(mask, ::emu::kShflDown, var, (int)delta, width);                          \
    }                                                                                                            \
    inline T __shfl_xor_sync(const unsigned int mask, const T var, const int laneMask, const int width = warpSize) { \
        return ::emu::detail::shuffle(mask, ::emu::kShflXor, var, laneMask, width);                             \
    }

// The operators CUDA declares for a 16-bit type and for its pair (global functions taking const
// references), defined in namespace emu::NS: the header brings them to the global scope with using-
// declarations, where ordinary lookup and argument-dependent lookup both find them, as CUDA's.
#define EMU_LOWP_OPERATORS(NS, T, ONE)                                                                           \
    namespace emu {                                                                                              \
    namespace NS {                                                                                               \
    inline T operator+(const T& lh, const T& rh) { return __hadd(lh, rh); }                                      \
    inline T operator-(const T& lh, const T& rh) { return __hsub(lh, rh); }                                      \
    inline T operator*(const T& lh, const T& rh) { return __hmul(lh, rh); }                                      \
    inline T operator/(const T& lh, const T& rh) { return __hdiv(lh, rh); }                                      \
    inline T& operator+=(T& lh, const T& rh) { return lh = __hadd(lh, rh); }                                     \
    inline T& operator-=(T& lh, const T& rh) { return lh = __hsub(lh, rh); }                                     \
    inline T& operator*=(T& lh, const T& rh) { return lh = __hmul(lh, rh); }                                     \
    inline T& operator/=(T& lh, const T& rh) { return lh = __hdiv(lh, rh); }                                     \
    inline T& operator++(T& h) { return h = __hadd(h, ::emu::detail::lowp_from_bits<T>(ONE)); }                        \
    inline T& operator--(T& h) { return h = __hsub(h, ::emu::detail::lowp_from_bits<T>(ONE)); }                        \
    inline T operator++(T& h, const int) { const T old = h; ++h; return old; }                                    \
    inline T operator--(T& h, const int) { const T old = h; --h; return old; }                                    \
    inline T operator+(const T& h) { return h; }                                                                 \
    inline T operator-(const T& h) { return __hneg(h); }                                                         \
    inline bool operator==(const T& lh, const T& rh) { return __heq(lh, rh); }                                   \
    inline bool operator!=(const T& lh, const T& rh) { return __hneu(lh, rh); }                                  \
    inline bool operator>(const T& lh, const T& rh) { return __hgt(lh, rh); }                                    \
    inline bool operator<(const T& lh, const T& rh) { return __hlt(lh, rh); }                                    \
    inline bool operator>=(const T& lh, const T& rh) { return __hge(lh, rh); }                                   \
    inline bool operator<=(const T& lh, const T& rh) { return __hle(lh, rh); }                                   \
    }                                                                                                            \
    }                                                                                                            \
    EMU_LOWP_USING_OPERATORS(NS)

#define EMU_LOWP_PAIR_OPERATORS(NS, T, T2, ONE)                                                                  \
    namespace emu {                                                                                              \
    namespace NS {                                                                                               \
    inline T2 operator+(const T2& lh, const T2& rh) { return __hadd2(lh, rh); }                                  \
    inline T2 operator-(const T2& lh, const T2& rh) { return __hsub2(lh, rh); }                                  \
    inline T2 operator*(const T2& lh, const T2& rh) { return __hmul2(lh, rh); }                                  \
    inline T2 operator/(const T2& lh, const T2& rh) { return __h2div(lh, rh); }                                  \
    inline T2& operator+=(T2& lh, const T2& rh) { return lh = __hadd2(lh, rh); }                                 \
    inline T2& operator-=(T2& lh, const T2& rh) { return lh = __hsub2(lh, rh); }                                 \
    inline T2& operator*=(T2& lh, const T2& rh) { return lh = __hmul2(lh, rh); }                                 \
    inline T2& operator/=(T2& lh, const T2& rh) { return lh = __h2div(lh, rh); }                                 \
    inline T2& operator++(T2& h) { return h = __hadd2(h, T2(::emu::detail::lowp_from_bits<T>(ONE), ::emu::detail::lowp_from_bits<T>(ONE))); }                    \
    inline T2& operator--(T2& h) { return h = __hsub2(h, T2(::emu::detail::lowp_from_bits<T>(ONE), ::emu::detail::lowp_from_bits<T>(ONE))); }                    \
    inline T2 operator++(T2& h, const int) { const T2 old = h; ++h; return old; }                                 \
    inline T2 operator--(T2& h, const int) { const T2 old = h; --h; return old; }                                 \
    inline T2 operator+(const T2& h) { return h; }                                                               \
    inline T2 operator-(const T2& h) { return __hneg2(h); }                                                      \
    inline bool operator==(const T2& lh, const T2& rh) { return __hbeq2(lh, rh); }                               \
    inline bool operator!=(const T2& lh, const T2& rh) { return __hbneu2(lh, rh); }                              \
    inline bool operator>(const T2& lh, const T2& rh) { return __hbgt2(lh, rh); }                                \
    inline bool operator<(const T2& lh, const T2& rh) { return __hblt2(lh, rh); }                                \
    inline bool operator>=(const T2& lh, const T2& rh) { return __hbge2(lh, rh); }                               \
    inline bool operator<=(const T2& lh, const T2& rh) { return __hble2(lh, rh); }                               \
    }                                                                                                            \
    }                                                                                                            \
    EMU_LOWP_USING_OPERATORS(NS)

#define EMU_LOWP_USING_OPERATORS(NS)                                                                             \
    using ::emu::NS::operator+;                                                                                  \
    using ::emu::NS::operator-;                                                                                  \
    using ::emu::NS::operator*;                                                                                  \
    using ::emu::NS::operator/;                                                                                  \
    using ::emu::NS::operator+=;                                                                                 \
    using ::emu::NS::operator-=;                                                                                 \
    using ::emu::NS::operator*=;                                                                                 \
    using ::emu::NS::operator/=;                                                                                 \
    using ::emu::NS::operator++;                                                                                 \
    using ::emu::NS::operator--;                                                                                 \
    using ::emu::NS::operator==;                                                                                 \
    using ::emu::NS::operator!=;                                                                                 \
    using ::emu::NS::operator>;                                                                                  \
    using ::emu::NS::operator<;                                                                                  \
    using ::emu::NS::operator>=;                                                                                 \
    using ::emu::NS::operator<=;
