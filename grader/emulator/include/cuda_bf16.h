// Emulator stand-in for <cuda_bf16.h> (CUDA 13): __nv_bfloat16 and __nv_bfloat162 with CUDA's
// members, conversions, operators, intrinsics (the same overloaded names as __half's: __hadd, hexp,
// __heq2, ...), math functions, shuffles, cache-hinted loads and stores and atomicAdd.
//
// A bfloat16 is the top 16 bits of a float (7 stored significand bits, float's exponent range); every
// operation rounds the exact result once, to nearest even, as a GPU does (emu_lowp.h says how, and what
// a NaN becomes). Like CUDA's, this header includes cuda_fp16.h and defines the explicit conversions
// between the two 16-bit types. The macros CUDA reads are honoured: CUDA_NO_BFLOAT16,
// __CUDA_NO_BFLOAT16_OPERATORS__, __CUDA_NO_BFLOAT162_OPERATORS__, __CUDA_NO_BFLOAT16_CONVERSIONS__.
#pragma once
#include "cuda_fp16.h"

struct alignas(2) __nv_bfloat16_raw {
    unsigned short x;
};
struct alignas(4) __nv_bfloat162_raw {
    unsigned short x;
    unsigned short y;
};

namespace emu {
namespace detail {
template <>
struct LowPrecision<__nv_bfloat16> {
    static constexpr int kMantissa = 7, kExponent = 8;
    using Raw = __nv_bfloat16_raw;
};
}  // namespace detail
}  // namespace emu

struct alignas(2) __nv_bfloat16 {
protected:
    unsigned short __x;

public:
    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(const __nv_bfloat16_raw& hr) : __x(hr.x) {}
    __nv_bfloat16& operator=(const __nv_bfloat16_raw& hr) { __x = hr.x; return *this; }
    volatile __nv_bfloat16& operator=(const __nv_bfloat16_raw& hr) volatile { __x = hr.x; return *this; }
    volatile __nv_bfloat16& operator=(const volatile __nv_bfloat16_raw& hr) volatile { __x = hr.x; return *this; }
    operator __nv_bfloat16_raw() const { __nv_bfloat16_raw r; r.x = __x; return r; }
    operator __nv_bfloat16_raw() const volatile { __nv_bfloat16_raw r; r.x = __x; return r; }
#if !defined(__CUDA_NO_BFLOAT16_CONVERSIONS__)
    explicit __nv_bfloat16(const __half f)
        : __x(::emu::detail::encode<7, 8>(::emu::detail::decode<10, 5>(static_cast<__half_raw>(f).x))) {}
    __nv_bfloat16(const float f) : __x(::emu::detail::encode<7, 8>(f)) {}
    __nv_bfloat16(const double f) : __x(::emu::detail::from_double_bits<7, 8>(f)) {}
    operator float() const { return ::emu::detail::widen_bfloat16(__x); }
    __nv_bfloat16& operator=(const float f) { __x = ::emu::detail::encode<7, 8>(f); return *this; }
    __nv_bfloat16& operator=(const double f) { __x = ::emu::detail::from_double_bits<7, 8>(f); return *this; }
    // from and to the integer types, as CUDA allows them: rounded to nearest in, truncated out
    __nv_bfloat16(short val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
    __nv_bfloat16(unsigned short val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
    __nv_bfloat16(int val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
    __nv_bfloat16(unsigned int val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
    __nv_bfloat16(const long val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
    __nv_bfloat16(const unsigned long val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
    __nv_bfloat16(long long val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
    __nv_bfloat16(unsigned long long val) : __x(::emu::detail::integer_bits<7, 8>(val)) {}
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
    __nv_bfloat16& operator=(short val) { return *this = __nv_bfloat16(val); }
    __nv_bfloat16& operator=(unsigned short val) { return *this = __nv_bfloat16(val); }
    __nv_bfloat16& operator=(int val) { return *this = __nv_bfloat16(val); }
    __nv_bfloat16& operator=(unsigned int val) { return *this = __nv_bfloat16(val); }
    __nv_bfloat16& operator=(long long val) { return *this = __nv_bfloat16(val); }
    __nv_bfloat16& operator=(unsigned long long val) { return *this = __nv_bfloat16(val); }
    constexpr operator bool() const { return (__x & 0x7FFFU) != 0U; }

private:
    template <class I>
    I truncated(I nan) const {
        return ::emu::detail::integer_of<I>(::emu::detail::decode<7, 8>(__x), ::emu::detail::kTowardZero, nan);
    }
#endif
};

struct alignas(4) __nv_bfloat162 {
    __nv_bfloat16 x;
    __nv_bfloat16 y;
    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
    __nv_bfloat162(const __nv_bfloat162_raw& h2r) : x(__nv_bfloat16_raw{h2r.x}), y(__nv_bfloat16_raw{h2r.y}) {}
    __nv_bfloat162& operator=(const __nv_bfloat162_raw& h2r) { return *this = __nv_bfloat162(h2r); }
    operator __nv_bfloat162_raw() const {
        __nv_bfloat162_raw r;
        r.x = static_cast<__nv_bfloat16_raw>(x).x;
        r.y = static_cast<__nv_bfloat16_raw>(y).x;
        return r;
    }
};

namespace emu {
namespace detail {
// __half's explicit conversion from a bfloat16 (cvt.rn.f16.bf16: rounded once, NaN canonical)
inline unsigned short half_bits_of_bfloat16(const __nv_bfloat16& value) {
    return encode<10, 5>(decode<7, 8>(static_cast<__nv_bfloat16_raw>(value).x));
}
}  // namespace detail
}  // namespace emu

EMU_LOWP_FUNCTIONS(__nv_bfloat16, __nv_bfloat162, bfloat16, bfloat162)

#if !defined(CUDA_NO_BFLOAT16)
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
#endif

#if !defined(__CUDA_NO_BFLOAT16_OPERATORS__)
EMU_LOWP_OPERATORS(bfloat16_operators, __nv_bfloat16, 0x3F80u)
#endif
#if !defined(__CUDA_NO_BFLOAT162_OPERATORS__)
EMU_LOWP_PAIR_OPERATORS(bfloat162_operators, __nv_bfloat16, __nv_bfloat162, 0x3F80u)
#endif

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
