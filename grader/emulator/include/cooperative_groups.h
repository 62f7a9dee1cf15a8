// cooperative_groups.h for the CPU emulator: the block, the warp-sized tiles, built on the emulator's
// block barrier and warp shuffles, and the grid, whose sync() is the runtime's grid barrier (valid in a
// kernel launched with cudaLaunchCooperativeKernel, as on a GPU). The members are CUDA 13's.
#pragma once

#include "cuda_emu.h"

namespace cooperative_groups {

class thread_block {
public:
    void sync() const { __syncthreads(); }
    unsigned long long thread_rank() const {
        return ((unsigned long long)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    }
    unsigned long long num_threads() const { return (unsigned long long)blockDim.x * blockDim.y * blockDim.z; }
    unsigned long long size() const { return num_threads(); }
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
    dim3 dim_threads() const { return group_dim(); }
};

inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block& block) { block.sync(); }

// The whole grid. Its sync() takes the caller's file and line (__builtin_FILE/__builtin_LINE, filled in
// at the call) so that a grid barrier that cannot complete is reported where the user wrote it.
class grid_group {
public:
    // CUDA's is false in a kernel not launched cooperatively (no grid workspace), where sync() traps.
    bool is_valid() const { return ::emu::launched_cooperatively(); }
    void sync(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const { ::emu::grid_sync(file, line); }

    // A split barrier: arrive, do work that needs no other block's, then wait. Waiting is where the
    // emulator synchronizes: what happens between the two runs before any block goes on, which is
    // one order CUDA allows (the reversed run of every case tries another).
    using arrival_token = unsigned int;
    arrival_token barrier_arrive() const { return 0; }
    void barrier_wait(arrival_token&&, const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
        ::emu::grid_sync(file, line);
    }

    static unsigned long long num_blocks() { return (unsigned long long)gridDim.x * (gridDim.y * gridDim.z); }
    static unsigned long long num_threads() { return num_blocks() * blockDim.x * blockDim.y * blockDim.z; }
    static unsigned long long size() { return num_threads(); }
    static unsigned long long block_rank() {
        return ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    }
    static unsigned long long thread_rank() {
        return block_rank() * blockDim.x * blockDim.y * blockDim.z +
               ((unsigned long long)threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    }
    static dim3 dim_blocks() { return dim3(gridDim.x, gridDim.y, gridDim.z); }
    static dim3 group_dim() { return dim_blocks(); }
    static dim3 block_index() { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    static dim3 dim_threads() { return dim3(gridDim.x * blockDim.x, gridDim.y * blockDim.y, gridDim.z * blockDim.z); }
    static dim3 thread_index() {
        return dim3(blockIdx.x * blockDim.x + threadIdx.x, blockIdx.y * blockDim.y + threadIdx.y,
                    blockIdx.z * blockDim.z + threadIdx.z);
    }
    // Clusters (sm_90): the emulator launches none, so each block is a cluster of one, as on a GPU.
    static dim3 dim_clusters() { return dim_blocks(); }
    static unsigned long long num_clusters() { return num_blocks(); }
    static dim3 cluster_index() { return block_index(); }
    static unsigned long long cluster_rank() { return block_rank(); }
};

inline grid_group this_grid() { return grid_group(); }
inline void sync(const grid_group& grid, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    grid.sync(file, line);
}

// Size consecutive threads of a block (by thread rank), Size a power of two up to a warp.
template <unsigned Size>
class thread_block_tile {
    static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0, "a tile is a power of two up to 32 threads");

    static unsigned lane() { return (unsigned)(this_thread_block().thread_rank() % 32); }
    static unsigned mask() {
        return Size == 32 ? 0xffffffffu : ((1u << Size) - 1u) << (lane() / Size * Size);
    }

public:
    void sync() const { __syncwarp(mask()); }
    unsigned long long thread_rank() const { return lane() % Size; }
    unsigned long long num_threads() const { return Size; }
    unsigned long long size() const { return Size; }
    unsigned long long meta_group_rank() const { return this_thread_block().thread_rank() / Size; }
    unsigned long long meta_group_size() const { return (this_thread_block().num_threads() + Size - 1) / Size; }

    // Any type of up to 8 bytes, as the tile's own templates take, not only those __shfl_sync has.
    template <class T> T shfl(T value, int source) const {
        return ::emu::detail::shuffle(mask(), ::emu::kShflIdx, value, source, Size);
    }
    template <class T> T shfl_down(T value, unsigned delta) const {
        return ::emu::detail::shuffle(mask(), ::emu::kShflDown, value, (int)delta, Size);
    }
    template <class T> T shfl_up(T value, unsigned delta) const {
        return ::emu::detail::shuffle(mask(), ::emu::kShflUp, value, (int)delta, Size);
    }
    template <class T> T shfl_xor(T value, int lane_mask) const {
        return ::emu::detail::shuffle(mask(), ::emu::kShflXor, value, lane_mask, Size);
    }
    int any(int predicate) const { return __any_sync(mask(), predicate); }
    int all(int predicate) const { return __all_sync(mask(), predicate); }
    unsigned ballot(int predicate) const {
        return (__ballot_sync(mask(), predicate) >> (lane() / Size * Size)) & (Size == 32 ? 0xffffffffu : (1u << Size) - 1u);
    }
};

template <unsigned Size, class Parent>
thread_block_tile<Size> tiled_partition(const Parent&) { return thread_block_tile<Size>(); }

template <unsigned Size>
void sync(const thread_block_tile<Size>& tile) { tile.sync(); }

}  // namespace cooperative_groups
