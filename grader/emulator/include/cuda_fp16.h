// Emulator stand-in for <cuda_fp16.h> (CUDA 13): __half and __half2 with CUDA's members, conversions,
// operators, intrinsics, math functions, shuffles, cache-hinted loads and stores and atomicAdd.
//
// A __half is its IEEE binary16 bits; every operation rounds the exact result once, as a GPU does
// (emu_lowp.h says how, and what a NaN becomes). The types have CUDA's constructors and conversion
// operators, so an expression CUDA finds ambiguous (`h * 2.0f`: __half * __half or float * float?) is
// ambiguous here too. The operators are CUDA's global ones, brought in by using-declarations from
// namespace emu. The macros CUDA reads are honoured: CUDA_NO_HALF, __CUDA_NO_HALF_OPERATORS__,
// __CUDA_NO_HALF2_OPERATORS__, __CUDA_NO_HALF_CONVERSIONS__.
#pragma once
#include "emu_lowp.h"

#define __CUDA_FP16_TYPES_EXIST__

struct alignas(2) __half_raw {
    unsigned short x;
};
struct alignas(4) __half2_raw {
    unsigned short x;
    unsigned short y;
};

struct __half;
struct __nv_bfloat16;
namespace emu {
namespace detail {
template <>
struct LowPrecision<__half> {
    static constexpr int kMantissa = 10, kExponent = 5;
    using Raw = __half_raw;
};
inline unsigned short half_bits_of_bfloat16(const __nv_bfloat16& value);  // cuda_bf16.h defines it
}  // namespace detail
}  // namespace emu

struct alignas(2) __half {
protected:
    unsigned short __x;

public:
    __half() = default;
    constexpr __half(const __half_raw& hr) : __x(hr.x) {}
    __half& operator=(const __half_raw& hr) { __x = hr.x; return *this; }
    volatile __half& operator=(const __half_raw& hr) volatile { __x = hr.x; return *this; }
    volatile __half& operator=(const volatile __half_raw& hr) volatile { __x = hr.x; return *this; }
    operator __half_raw() const { __half_raw r; r.x = __x; return r; }
    operator __half_raw() const volatile { __half_raw r; r.x = __x; return r; }
#if !defined(__CUDA_NO_HALF_CONVERSIONS__)
    // CUDA's `explicit __half(const __nv_bfloat16)`, defined once cuda_bf16.h completes that type
    template <class B, class = typename std::enable_if<std::is_same<B, __nv_bfloat16>::value>::type>
    explicit __half(const B f) : __x(::emu::detail::half_bits_of_bfloat16(f)) {}
    __half(const float f) : __x(::emu::detail::encode<10, 5>(f)) {}
    __half(const double f) : __x(::emu::detail::from_double_bits<10, 5>(f)) {}
    operator float() const { return ::emu::detail::widen_half(__x); }
    __half& operator=(const float f) { __x = ::emu::detail::encode<10, 5>(f); return *this; }
    __half& operator=(const double f) { __x = ::emu::detail::from_double_bits<10, 5>(f); return *this; }
    // from and to the integer types, as CUDA allows them: rounded to nearest in, truncated out
    __half(const short val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    __half(const unsigned short val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    __half(const int val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    __half(const unsigned int val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    __half(const long val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    __half(const unsigned long val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    __half(const long long val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    __half(const unsigned long long val) : __x(::emu::detail::integer_bits<10, 5>(val)) {}
    operator signed char() const { return truncated<signed char>(0); }
    operator unsigned char() const { return truncated<unsigned char>(0); }
    operator char() const { return truncated<char>(0); }
    operator short() const { return truncated<short>(0); }
    operator unsigned short() const { return truncated<unsigned short>(0); }
    operator int() const { return truncated<int>(0); }
    operator unsigned int() const { return truncated<unsigned int>(0); }
    operator long() const { return truncated<long>(LONG_MIN); }
    operator unsigned long() const { return truncated<unsigned long>(1ul << 63); }
    operator long long() const { return truncated<long long>(LLONG_MIN); }
    operator unsigned long long() const { return truncated<unsigned long long>(1ull << 63); }
    __half& operator=(const short val) { return *this = __half(val); }
    __half& operator=(const unsigned short val) { return *this = __half(val); }
    __half& operator=(const int val) { return *this = __half(val); }
    __half& operator=(const unsigned int val) { return *this = __half(val); }
    __half& operator=(const long long val) { return *this = __half(val); }
    __half& operator=(const unsigned long long val) { return *this = __half(val); }
    constexpr operator bool() const { return (__x & 0x7FFFU) != 0U; }

private:
    template <class I>
    I truncated(I nan) const {
        return ::emu::detail::integer_of<I>(::emu::detail::decode<10, 5>(__x), ::emu::detail::kTowardZero, nan);
    }
#endif
};

struct alignas(4) __half2 {
    __half x;
    __half y;
    __half2() = default;
    constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
    __half2(const __half2_raw& h2r) : x(__half_raw{h2r.x}), y(__half_raw{h2r.y}) {}
    __half2& operator=(const __half2_raw& h2r) { return *this = __half2(h2r); }
    operator __half2_raw() const {
        __half2_raw r;
        r.x = static_cast<__half_raw>(x).x;
        r.y = static_cast<__half_raw>(y).x;
        return r;
    }
};

EMU_LOWP_FUNCTIONS(__half, __half2, half, half2)

#if !defined(CUDA_NO_HALF)
typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
typedef __half nv_half;
typedef __half2 nv_half2;
#endif

#if !defined(__CUDA_NO_HALF_OPERATORS__)
EMU_LOWP_OPERATORS(half_operators, __half, 0x3C00u)
#endif
#if !defined(__CUDA_NO_HALF2_OPERATORS__)
EMU_LOWP_PAIR_OPERATORS(half2_operators, __half, __half2, 0x3C00u)
#endif

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
