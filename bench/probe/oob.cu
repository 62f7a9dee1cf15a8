#include <cuda_runtime.h>
__global__ void spin(int *flag) { while (atomicAdd(flag, 0) == 0) { } }
__global__ void bad(float *p) { p[1ull << 40] = 1.0f; }
extern "C" void solve_spin() { int *f; cudaMalloc(&f, 4); cudaMemset(f, 0, 4); spin<<<1,1>>>(f); }
extern "C" void solve_bad(float *p) { bad<<<1,1>>>(p); }
extern "C" int sync_now() { return (int)cudaDeviceSynchronize(); }
