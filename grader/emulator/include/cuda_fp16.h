// Emulator stand-in for <cuda_fp16.h>: IEEE binary16 storage, arithmetic through float.
#pragma once
#include "cuda_emu.h"

struct __half {
    unsigned short x;
    __half() = default;
    __half(float f) : x(from_float(f)) {}
    operator float() const { return to_float(x); }

    static unsigned short from_float(float f) {
        unsigned bits;
        std::memcpy(&bits, &f, 4);
        unsigned sign = (bits >> 16) & 0x8000u;
        unsigned magnitude = bits & 0x7fffffffu;
        if (magnitude >= 0x7f800000u) return static_cast<unsigned short>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0));
        if (magnitude >= 0x477ff000u) return static_cast<unsigned short>(sign | 0x7c00u);  // overflows to infinity
        if (magnitude < 0x38800000u) {  // subnormal or zero in half: round the scaled value to nearest even
            float scaled = std::fabs(f) * 16777216.0f;  // 2^24: one half-subnormal step becomes 1
            return static_cast<unsigned short>(sign | static_cast<unsigned>(std::nearbyint(scaled)));
        }
        unsigned rounded = magnitude + 0x0fffu + ((magnitude >> 13) & 1u);  // round to nearest even
        return static_cast<unsigned short>(sign | ((rounded - 0x38000000u) >> 13));
    }
    static float to_float(unsigned short h) {
        unsigned sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
        if (exponent == 0) {
            float value = std::ldexp(static_cast<float>(mantissa), -24);
            return sign ? -value : value;
        }
        unsigned bits = exponent == 31 ? sign | 0x7f800000u | (mantissa << 13)
                                       : sign | ((exponent + 112) << 23) | (mantissa << 13);
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
};
typedef __half half;
struct __half2 {
    __half x, y;
};

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline float __half2float(__half h) { return static_cast<float>(h); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
inline __half2 __float2half2_rn(float a) { return __half2{__half(a), __half(a)}; }
inline float __low2float(__half2 h) { return h.x; }
inline float __high2float(__half2 h) { return h.y; }
inline __half __hadd(__half a, __half b) { return __half(float(a) + float(b)); }
inline __half __hsub(__half a, __half b) { return __half(float(a) - float(b)); }
inline __half __hmul(__half a, __half b) { return __half(float(a) * float(b)); }
inline __half __hfma(__half a, __half b, __half c) { return __half(std::fma(float(a), float(b), float(c))); }

// What CUDA's cuda_fp16.h adds to the cache-hinted loads and stores and to the shuffles for the two half types.
#define EMU_HALF_OVERLOADS(T)                                                                              \
    inline T __ldg(const T* p) { return *p; }                                                              \
    inline T __ldcg(const T* p) { return *p; }                                                             \
    inline T __ldca(const T* p) { return *p; }                                                             \
    inline T __ldcs(const T* p) { return *p; }                                                             \
    inline T __ldlu(const T* p) { return *p; }                                                             \
    inline T __ldcv(const T* p) { return *p; }                                                             \
    inline void __stwb(T* p, T v) { *p = v; }                                                              \
    inline void __stcg(T* p, T v) { *p = v; }                                                              \
    inline void __stcs(T* p, T v) { *p = v; }                                                              \
    inline void __stwt(T* p, T v) { *p = v; }                                                              \
    inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {                       \
        return ::emu::detail::shuffle(mask, ::emu::kShflIdx, var, src_lane, width);                        \
    }                                                                                                      \
    inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {                  \
        return ::emu::detail::shuffle(mask, ::emu::kShflUp, var, (int)delta, width);                       \
    }                                                                                                      \
    inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {                \
        return ::emu::detail::shuffle(mask, ::emu::kShflDown, var, (int)delta, width);                     \
    }                                                                                                      \
    inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {                  \
        return ::emu::detail::shuffle(mask, ::emu::kShflXor, var, lane_mask, width);                       \
    }
EMU_HALF_OVERLOADS(__half)
EMU_HALF_OVERLOADS(__half2)
#undef EMU_HALF_OVERLOADS
