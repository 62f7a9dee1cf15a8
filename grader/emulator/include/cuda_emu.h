// The grader's CUDA compatibility layer for CPU emulation. Force-included before the user's file.
//
// Every CUDA thread runs as a fiber; all fibers of a block run on one OS thread, so block-scope
// __shared__ variables are `static thread_local`. Built-in index variables are thread-locals the
// scheduler updates on every switch. Barriers and warp operations park the calling fiber until
// every thread that must take part has arrived, then compute exact results.
#pragma once
#include "emu_types.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

// ----------------------------------------------------------------------------- runtime types

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorAssert = 710,
    cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorNotSupported = 801,
    cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4,
};

enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2, cudaFuncCachePreferEqual = 3 };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault = 0, cudaSharedMemBankSizeFourByte = 1, cudaSharedMemBankSizeEightByte = 2 };

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxRegistersPerMultiprocessor = 82,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
};

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int concurrentKernels;
    int ECCEnabled;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int managedMemory;
    int isMultiGpuBoard;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    size_t sharedMemPerBlockOptin;
    size_t reservedSharedMemPerBlock;
    int maxBlocksPerMultiProcessor;
    int cooperativeLaunch;
};

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamDefault 0x0
#define cudaStreamNonBlocking 0x1
#define cudaEventDefault 0x0
#define cudaEventBlockingSync 0x1
#define cudaEventDisableTiming 0x2
#define cudaHostAllocDefault 0x0

// ----------------------------------------------------------------------------- the emulator core

namespace emu {

union Arg {
    void* p;
    long long i;
    double f;
};

extern thread_local uint3 tl_thread_idx;
extern thread_local uint3 tl_block_idx;
extern thread_local dim3 tl_block_dim;
extern thread_local dim3 tl_grid_dim;

enum WarpOp : int {
    kShflIdx, kShflUp, kShflDown, kShflXor, kBallot, kAny, kAll, kSync, kReduceAdd, kReduceMin, kReduceMax,
    kReduceMinSigned, kReduceMaxSigned
};
enum BarrierOp : int { kBarrierPlain, kBarrierCount, kBarrierAnd, kBarrierOr };

int syncthreads(BarrierOp op, int predicate, const char* file, int line);
unsigned long long warp_exchange(unsigned mask, WarpOp op, unsigned long long value, int arg, int width,
                                 const char* file, int line);
unsigned active_mask();
void* dynamic_shared();
void track_shared(void* address, size_t bytes);

struct KernelSite {
    const char* name;
    int line;
    const void* function;
};
void run_grid(dim3 grid, dim3 block, size_t dynamic_smem, const KernelSite& site, void (*body)(void*), void* context);
cudaError_t run_cooperative_grid(dim3 grid, dim3 block, size_t dynamic_smem, const KernelSite& site,
                                 void (*body)(void*), void* context);
cudaError_t untyped_cooperative_launch(const char* name, int line);
bool launched_cooperatively();
void grid_sync(const char* file, int line);
size_t max_dynamic_smem(const void* function);
void set_max_dynamic_smem(const void* function, int bytes);

struct SharedTracker {
    SharedTracker(void* address, size_t bytes) { track_shared(address, bytes); }
};

namespace detail {
template <class T>
unsigned long long to_bits(T value) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "warp operations move at most 8 bytes");
    unsigned long long bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    return bits;
}
template <class T>
T from_bits(unsigned long long bits) {
    T value;
    std::memcpy(&value, &bits, sizeof(T));
    return value;
}
}  // namespace detail

// Runs `kernel` over a grid, each fiber calling it with its own copy of the parameters, as on a GPU.
template <class Run, class... P>
auto run_kernel(Run run, void (*kernel)(P...), const char* name, int line, std::tuple<std::decay_t<P>...>& packed) {
    struct Context {
        void (*kernel)(P...);
        std::tuple<std::decay_t<P>...>* args;
    } context{kernel, &packed};
    return run(KernelSite{name, line, reinterpret_cast<const void*>(kernel)},
               [](void* c) {
                   auto* ctx = static_cast<Context*>(c);
                   std::apply(ctx->kernel, *ctx->args);
               },
               &context);
}

template <class... P>
struct Launch {
    void (*kernel)(P...);
    const char* name;
    int line;
    dim3 grid, block;
    size_t smem;

    template <class... A>
    void operator()(A&&... args) const {
        static_assert(sizeof...(A) == sizeof...(P), "kernel launched with the wrong number of arguments");
        std::tuple<std::decay_t<P>...> packed(static_cast<std::decay_t<P>>(std::forward<A>(args))...);
        run_kernel([&](const KernelSite& site, void (*body)(void*), void* context) {
                       run_grid(grid, block, smem, site, body, context);
                   },
                   kernel, name, line, packed);
    }
};

template <class... P>
Launch<P...> launch(void (*kernel)(P...), const char* name, int line, dim3 grid, dim3 block, size_t smem = 0,
                    cudaStream_t = nullptr) {
    return Launch<P...>{kernel, name, line, grid, block, smem};
}

// cudaLaunchCooperativeKernel(kernel, grid, block, args, smem, stream), rewritten by translate.py with
// the kernel's name and line in front and any cast to void* dropped, so that the kernel's parameter
// types are known here: args[i] points to the value of parameter i, as CUDA reads it.
template <class... P, size_t... I>
std::tuple<std::decay_t<P>...> unpack_arguments(void** args, std::index_sequence<I...>) {
    return std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...);
}

template <class... P>
cudaError_t launch_cooperative(const char* name, int line, void (*kernel)(P...), dim3 grid, dim3 block, void** args,
                               size_t smem = 0, cudaStream_t = nullptr) {
    if (sizeof...(P) && !args) return cudaErrorInvalidValue;
    auto packed = unpack_arguments<P...>(args, std::index_sequence_for<P...>{});
    return run_kernel([&](const KernelSite& site, void (*body)(void*), void* context) {
                          return run_cooperative_grid(grid, block, smem, site, body, context);
                      },
                      kernel, name, line, packed);
}

// The kernel came as a pointer whose type says nothing of its parameters (a void* variable).
inline cudaError_t launch_cooperative(const char* name, int line, const void*, dim3, dim3, void**, size_t = 0,
                                      cudaStream_t = nullptr) {
    return untyped_cooperative_launch(name, line);
}

}  // namespace emu

// ----------------------------------------------------------------------------- device vocabulary

// CUDA starts every shared variable at least 16 bytes aligned, and kernels rely on it when they
// read `__shared__ float` arrays as float4; x86 vector loads fault on less.
#define __shared__ static thread_local __attribute__((aligned(16)))
#define __emu_track_shared(name) \
    static thread_local ::emu::SharedTracker __emu_shared_tracker_##name((void*)&(name), sizeof(name))

#define threadIdx (static_cast<const uint3&>(::emu::tl_thread_idx))
#define blockIdx (static_cast<const uint3&>(::emu::tl_block_idx))
#define blockDim (static_cast<const dim3&>(::emu::tl_block_dim))
#define gridDim (static_cast<const dim3&>(::emu::tl_grid_dim))
static constexpr int warpSize = 32;

#define __syncthreads() ((void)::emu::syncthreads(::emu::kBarrierPlain, 0, __FILE__, __LINE__))
#define __syncthreads_count(p) ::emu::syncthreads(::emu::kBarrierCount, (p) ? 1 : 0, __FILE__, __LINE__)
#define __syncthreads_and(p) ::emu::syncthreads(::emu::kBarrierAnd, (p) ? 1 : 0, __FILE__, __LINE__)
#define __syncthreads_or(p) ::emu::syncthreads(::emu::kBarrierOr, (p) ? 1 : 0, __FILE__, __LINE__)

inline void __syncwarp(unsigned mask = 0xffffffffu) { ::emu::warp_exchange(mask, ::emu::kSync, 0, 0, 32, "", 0); }
inline unsigned __activemask() { return ::emu::active_mask(); }

namespace emu {
namespace detail {
template <class T>
T shuffle(unsigned mask, WarpOp op, T var, int arg, int width) {
    return from_bits<T>(warp_exchange(mask, op, to_bits(var), arg, width, "", 0));
}
}  // namespace detail
}  // namespace emu

// CUDA's shuffle overloads, one per type it declares them for (sm_30_intrinsics.h; cuda_fp16.h adds
// __half and __half2), not a template: a file may define its own for another type, as under nvcc.
#define EMU_SHUFFLES(T)                                                                                    \
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
EMU_SHUFFLES(int)
EMU_SHUFFLES(unsigned int)
EMU_SHUFFLES(long)
EMU_SHUFFLES(unsigned long)
EMU_SHUFFLES(long long)
EMU_SHUFFLES(unsigned long long)
EMU_SHUFFLES(float)
EMU_SHUFFLES(double)
#undef EMU_SHUFFLES
inline unsigned __ballot_sync(unsigned mask, int predicate) {
    return (unsigned)::emu::warp_exchange(mask, ::emu::kBallot, predicate != 0, 0, 32, "", 0);
}
inline int __any_sync(unsigned mask, int predicate) {
    return (int)::emu::warp_exchange(mask, ::emu::kAny, predicate != 0, 0, 32, "", 0);
}
inline int __all_sync(unsigned mask, int predicate) {
    return (int)::emu::warp_exchange(mask, ::emu::kAll, predicate != 0, 0, 32, "", 0);
}
inline unsigned __reduce_add_sync(unsigned mask, unsigned value) {
    return (unsigned)::emu::warp_exchange(mask, ::emu::kReduceAdd, value, 0, 32, "", 0);
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned value) {
    return (unsigned)::emu::warp_exchange(mask, ::emu::kReduceMin, value, 0, 32, "", 0);
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
    return (unsigned)::emu::warp_exchange(mask, ::emu::kReduceMax, value, 0, 32, "", 0);
}
inline int __reduce_add_sync(unsigned mask, int value) { return (int)__reduce_add_sync(mask, (unsigned)value); }
inline int __reduce_min_sync(unsigned mask, int value) {
    return (int)::emu::warp_exchange(mask, ::emu::kReduceMinSigned, (unsigned)value, 0, 32, "", 0);
}
inline int __reduce_max_sync(unsigned mask, int value) {
    return (int)::emu::warp_exchange(mask, ::emu::kReduceMaxSigned, (unsigned)value, 0, 32, "", 0);
}

// ----------------------------------------------------------------------------- host API

cudaError_t cudaMalloc(void** pointer, size_t bytes);
template <class T>
cudaError_t cudaMalloc(T** pointer, size_t bytes) { return cudaMalloc(reinterpret_cast<void**>(pointer), bytes); }
cudaError_t cudaMallocManaged(void** pointer, size_t bytes, unsigned flags = 1);
template <class T>
cudaError_t cudaMallocManaged(T** pointer, size_t bytes, unsigned flags = 1) { return cudaMallocManaged(reinterpret_cast<void**>(pointer), bytes, flags); }
cudaError_t cudaMallocHost(void** pointer, size_t bytes);
template <class T>
cudaError_t cudaMallocHost(T** pointer, size_t bytes) { return cudaMallocHost(reinterpret_cast<void**>(pointer), bytes); }
cudaError_t cudaHostAlloc(void** pointer, size_t bytes, unsigned flags);
cudaError_t cudaFree(void* pointer);
cudaError_t cudaFreeHost(void* pointer);
cudaError_t cudaMallocAsync(void** pointer, size_t bytes, cudaStream_t stream);
template <class T>
cudaError_t cudaMallocAsync(T** pointer, size_t bytes, cudaStream_t stream) { return cudaMallocAsync(reinterpret_cast<void**>(pointer), bytes, stream); }
cudaError_t cudaFreeAsync(void* pointer, cudaStream_t stream);
cudaError_t cudaMallocPitch(void** pointer, size_t* pitch, size_t width_bytes, size_t height);
template <class T>
cudaError_t cudaMallocPitch(T** pointer, size_t* pitch, size_t width_bytes, size_t height) { return cudaMallocPitch(reinterpret_cast<void**>(pointer), pitch, width_bytes, height); }
cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width_bytes, size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes);
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* dst, int value, size_t bytes);
cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream = nullptr);
// A symbol (__constant__, __device__) is host memory in emulation; the other side may be device memory,
// which host code cannot touch: cudaMemcpy reaches it.
template <class T>
cudaError_t cudaMemcpyToSymbol(const T& symbol, const void* src, size_t bytes, size_t offset = 0,
                               cudaMemcpyKind = cudaMemcpyHostToDevice) {
    return cudaMemcpy(reinterpret_cast<char*>(const_cast<T*>(&symbol)) + offset, src, bytes, cudaMemcpyDefault);
}
template <class T>
cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t bytes, size_t offset = 0,
                                 cudaMemcpyKind = cudaMemcpyDeviceToHost) {
    return cudaMemcpy(dst, reinterpret_cast<const char*>(&symbol) + offset, bytes, cudaMemcpyDefault);
}
template <class T>
cudaError_t cudaGetSymbolAddress(void** pointer, const T& symbol) {
    *pointer = const_cast<T*>(&symbol);
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize();
// Reached only through a pointer to it: translate.py rewrites every call (see emu::launch_cooperative).
cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 grid_dim, dim3 block_dim, void** args, size_t shared_mem,
                                        cudaStream_t stream);
cudaError_t cudaDeviceReset();
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorString(cudaError_t error);
const char* cudaGetErrorName(cudaError_t error);
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config);

cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);

template <class T>
cudaError_t cudaFuncSetAttribute(T* function, cudaFuncAttribute attr, int value) {
    if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
        if (value < 0 || value > 227 * 1024) return cudaErrorInvalidValue;
        ::emu::set_max_dynamic_smem(reinterpret_cast<const void*>(function), value);
    }
    return cudaSuccess;
}
template <class T>
cudaError_t cudaFuncSetCacheConfig(T*, cudaFuncCache) { return cudaSuccess; }
template <class T>
cudaError_t cudaFuncSetSharedMemConfig(T*, cudaSharedMemConfig) { return cudaSuccess; }

namespace emu {
int occupancy_blocks(int block_size, size_t dynamic_smem);
}
template <class T>
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, T*, int block_size, size_t dynamic_smem) {
    if (block_size <= 0 || block_size > 1024) return cudaErrorInvalidValue;
    *blocks = ::emu::occupancy_blocks(block_size, dynamic_smem);
    return cudaSuccess;
}
template <class T>
cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, T*, size_t dynamic_smem = 0,
                                               int block_size_limit = 0) {
    int best = block_size_limit > 0 && block_size_limit < 1024 ? block_size_limit : 1024;
    best = best / 32 * 32 > 0 ? best / 32 * 32 : best;
    *block_size = best;
    *min_grid_size = ::emu::occupancy_blocks(best, dynamic_smem) * 132;
    return cudaSuccess;
}
