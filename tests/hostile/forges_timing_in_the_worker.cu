// expect: ACCEPTED
// A correct naive matmul that, on its first call, reaches into the worker that runs it: the worker is a
// Python process, so the submission can find the interpreter's C API with dlsym and run Python in it,
// replacing the worker's sampling so that every timed sample reports FORGED_SHARE of the real time, by
// the events and by the worker's own clock alike. Correctness is untouched (this corpus grades it:
// ACCEPTED). Timed (`grader submit`), the grader's own clock around each request sees the real time:
// at 0.3 the worker's clock claims under half of it, IMPOSSIBLE_TIMING; at 0.8 the time counted is the
// grader's clock, so the forgery gains at most 10% (tests/test_gpu_grading.py).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <cstdio>

constexpr double FORGED_SHARE = 0.3;

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = 0.0f;
        for (int i = 0; i < N; ++i) sum += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

static void rewrite_the_worker() {
    using Ensure = int (*)();
    using Release = void (*)(int);
    using Run = int (*)(const char*);
    auto ensure = reinterpret_cast<Ensure>(dlsym(RTLD_DEFAULT, "PyGILState_Ensure"));
    auto release = reinterpret_cast<Release>(dlsym(RTLD_DEFAULT, "PyGILState_Release"));
    auto run = reinterpret_cast<Run>(dlsym(RTLD_DEFAULT, "PyRun_SimpleString"));
    if (!ensure || !release || !run) return;  // not a Python worker (the emulator's)
    char code[512];
    std::snprintf(code, sizeof code,
                  "import sys\n"
                  "w = sys.modules['__main__']\n"  // the worker runs as python -m grader.worker
                  "real = w.Timer.sample\n"
                  "def forged(*args):\n"
                  "    reply = real(*args)\n"
                  "    reply['ms'] = [v * %g for v in reply['ms']]\n"
                  "    reply['wall_s'] = [v * %g for v in reply['wall_s']]\n"
                  "    return reply\n"
                  "w.Timer.sample = staticmethod(forged)\n", FORGED_SHARE, FORGED_SHARE);
    int state = ensure();
    run(code);
    release(state);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool rewritten = false;
    if (!rewritten) {
        rewrite_the_worker();
        rewritten = true;
    }
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
