#!/usr/bin/env bash
# Device session for bench/probe/memory_bound_probe.cu: builds the probe, the reference levels and the
# candidate variants, and times them under the four flush modes. Logs go to $OUT (or /tmp/mbp-out).
set -uo pipefail
OUT=${OUT:-/tmp/mbp-out}
B=$(mktemp -d)
ARCH=-arch=sm_90
nvcc -O3 $ARCH -o $B/probe bench/probe/memory_bound_probe.cu -ldl || exit 1
lib() { nvcc -O3 $ARCH -shared -Xcompiler -fPIC "${@:3}" -o $B/$1.so $2 || echo "build failed: $1"; }
lib r6 challenges/reduction/levels/5_several_per_thread.cu
lib r7 challenges/reduction/levels/6_warp_shuffle.cu
lib r8 challenges/reduction/levels/7_single_pass.cu
R=bench/probe/candidates/reduction_variants.cu
lib r_sp_u2_b8 $R -DSINGLE_PASS=1 -DUNROLL=2 -DBLOCKS_PER_SM=8
lib r_sp_u4_b8 $R -DSINGLE_PASS=1 -DUNROLL=4 -DBLOCKS_PER_SM=8
lib r_sp_u8_b8 $R -DSINGLE_PASS=1 -DUNROLL=8 -DBLOCKS_PER_SM=8
lib r_sp_u4_b4 $R -DSINGLE_PASS=1 -DUNROLL=4 -DBLOCKS_PER_SM=4
lib r_sp_u8_b4 $R -DSINGLE_PASS=1 -DUNROLL=8 -DBLOCKS_PER_SM=4
lib r_tp_u4_b8 $R -DSINGLE_PASS=0 -DUNROLL=4 -DBLOCKS_PER_SM=8
lib t3 challenges/matrix_transpose/levels/3_padded_tile.cu
lib t4 challenges/matrix_transpose/levels/4_tile_several_per_thread.cu
lib t5 challenges/matrix_transpose/levels/5_wide_tile.cu
T=bench/probe/candidates/transpose_variants.cu
lib t_32x32_8 $T -DTILE_R=32 -DTILE_C=32 -DBY=8
lib t_32x64_8 $T -DTILE_R=32 -DTILE_C=64 -DBY=8
lib t_64x32_8 $T -DTILE_R=64 -DTILE_C=32 -DBY=8
lib t_64x64_8 $T -DTILE_R=64 -DTILE_C=64 -DBY=8
lib t_64x64_16 $T -DTILE_R=64 -DTILE_C=64 -DBY=16
lib t_32x32_8s $T -DTILE_R=32 -DTILE_C=32 -DBY=8 -DSTREAM=1
lib t_64x64_8s $T -DTILE_R=64 -DTILE_C=64 -DBY=8 -DSTREAM=1
lib v4 challenges/vector_add/levels/4_float4_full_grid.cu
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv | tee $OUT/gpu.txt
$B/probe copy | tee $OUT/copy.txt
$B/probe vector_add 33554432 $B/v4.so | tee $OUT/vector_add.txt
RLIBS=${RLIBS:-"$B/r6.so $B/r7.so $B/r8.so $B/r_sp_u2_b8.so $B/r_sp_u4_b8.so $B/r_sp_u8_b8.so $B/r_sp_u4_b4.so $B/r_sp_u8_b4.so $B/r_tp_u4_b8.so"}
for n in 33554432 33554431 4194304; do $B/probe reduction $n $RLIBS | tee -a $OUT/reduction.txt; done
TLIBS=${TLIBS:-"$B/t3.so $B/t4.so $B/t5.so $B/t_32x32_8.so $B/t_32x64_8.so $B/t_64x32_8.so $B/t_64x64_8.so $B/t_64x64_16.so $B/t_32x32_8s.so $B/t_64x64_8s.so"}
for shape in "8192 8192" "8191 8193" "7000 6000" "4096 16384"; do $B/probe transpose $shape $TLIBS | tee -a $OUT/transpose.txt; done
