// cooperative_groups.h for the CPU emulator: the block and the warp-sized tiles, built on the
// emulator's block barrier and warp shuffles. Grid-wide groups (this_grid, grid.sync) are refused
// before compiling (translate.py: UNSUPPORTED), since the emulator runs blocks one after another.
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
