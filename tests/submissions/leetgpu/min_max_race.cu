// expect: ACCEPTED
// strict: RACE
// One block; thread t takes elements t, t + 256, ... and stores its (lo, hi) in shared memory, then an
// upward tree leaves the block's answer in the last slot: at step s, thread t with (t + 1) % 2s == 0 combines
// its slot with slot t - s. The bug: no __syncthreads() between the first stores and the first step, where
// every odd thread reads its even neighbour's slot. On a GPU the neighbours share a warp and this works; with
// threads run one after the other in ascending order each slot is written before it is read, but in
// descending order the odd threads read still-unwritten slots and the even threads' values are lost (the
// fixture's [2, 7, -4] gives lo = 7 then).
#include <cfloat>
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void min_max_one_block(const float* x, float* lo, float* hi, int N) {
    __shared__ float s_lo[THREADS], s_hi[THREADS];
    int t = threadIdx.x;
    float l = FLT_MAX, h = -FLT_MAX;
    for (int i = t; i < N; i += THREADS) {
        l = fminf(l, x[i]);
        h = fmaxf(h, x[i]);
    }
    s_lo[t] = l;
    s_hi[t] = h;
    // missing: __syncthreads();
    for (int step = 1; step < THREADS; step *= 2) {
        if ((t + 1) % (2 * step) == 0) {
            s_lo[t] = fminf(s_lo[t], s_lo[t - step]);
            s_hi[t] = fmaxf(s_hi[t], s_hi[t - step]);
        }
        __syncthreads();
    }
    if (t == THREADS - 1) {
        *lo = s_lo[t];
        *hi = s_hi[t];
    }
}

extern "C" void solve(const float* x, float* lo, float* hi, int N) {
    min_max_one_block<<<1, THREADS>>>(x, lo, hi, N);
    cudaDeviceSynchronize();
}
