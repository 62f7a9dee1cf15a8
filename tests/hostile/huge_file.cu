// expect: RUNTIME_ERROR
// expect-message: file
// requires: sandbox
// Writes a huge file in /tmp, 1 MB at a time (once per worker), then computes C correctly. The
// worker's file-size cap must stop it at 64 MiB; without limits it stops itself at 256 MB (ACCEPTED).
#include <cuda_runtime.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <cstdlib>
#include <vector>

constexpr int BLOCK = 16;
constexpr size_t CHUNK = 1 << 20;     // 1 MB
constexpr int MAX_CHUNKS = 10240;     // what it "wants": 10 GB
constexpr int SAFETY_CHUNKS = 256;    // what it will ever write: 256 MB, so a missing cap harms nothing

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;

    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        acc += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    }
    C[(size_t)row * K + col] = acc;
}

static void fill_disk() {
    char path[] = "/tmp/huge_file_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return;
    unlink(path);  // deleted at once: the space comes back when the fd closes, even if we are killed
    std::vector<char> chunk(CHUNK, 'x');
    for (int i = 0; i < MAX_CHUNKS && i < SAFETY_CHUNKS; ++i) {
        size_t done = 0;
        ssize_t n = 0;
        while (done < CHUNK && (n = write(fd, chunk.data() + done, CHUNK - done)) > 0) done += n;
        if (done == CHUNK) continue;
        int error = n < 0 ? errno : EIO;
        close(fd);
        if (error == EFBIG) {
            // Past the file-size cap. A C program dies of SIGXFSZ here, but a process that ignores
            // the signal (the CUDA backend's Python worker does) only sees EFBIG: die the same way.
            signal(SIGXFSZ, SIG_DFL);
            raise(SIGXFSZ);
        }
        std::abort();  // any other write failure (a full disk): crash, so the verdict stays an error
    }
    close(fd);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool written = false;  // once per worker
    if (!written) {
        written = true;
        fill_disk();  // BUG: tries to fill the disk
    }
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
