// expect: ACCEPTED
// requires: sandbox
// Tries to open a TCP connection to 127.0.0.1:$GRADER_TEST_PORT (9 if unset; the test listens there)
// with a 1 s timeout. If it connects, a submission could talk to the world: it leaves C unwritten.
// The sandbox has no network (its loopback is down), so the connect fails and C is computed.
#include <arpa/inet.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>

constexpr int BLOCK = 16;

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

// True when a TCP connection to 127.0.0.1:port opens within one second.
static bool can_connect(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool connected = false;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        connected = true;
    } else if (errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int error = 0;
        socklen_t size = sizeof error;
        connected = poll(&p, 1, 1000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 && error == 0;
    }
    close(fd);
    return connected;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static const int port = std::getenv("GRADER_TEST_PORT") ? std::atoi(std::getenv("GRADER_TEST_PORT")) : 9;
    static const bool online = port > 0 && port < 65536 && can_connect(port);  // tried once per worker
    if (online) {
        std::printf("opens_network_socket: connected to 127.0.0.1:%d; leaving C unwritten\n", port);
        std::fflush(stdout);
        return;  // sabotage: network access turns into a failed case
    }
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
