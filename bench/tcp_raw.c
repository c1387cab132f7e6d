/* bench/tcp_raw.c: what this machine's TCP loopback gives without any MPI: a ping-pong of SIZE
 * bytes (one-way latency, busy-polled non-blocking recv like rrt's progress) and a one-way
 * stream of SIZE-byte writes (bandwidth), between two processes.
 *   cc -O2 -o tcp_raw bench/tcp_raw.c && ./tcp_raw [pingpong|stream] SIZE ITERS [STREAMS]
 * STREAMS > 1 (stream only): every message is cut into STREAMS equal parts sent over that many
 * connections at once, round-robin from one thread on each side (what striping in rrt's
 * single-threaded progress would do).
 * Between two network namespaces: TCP_RAW_ADDR=10.250.0.1 (listen there, in the namespace the
 * program runs in) and TCP_RAW_PEER_NETNS=/run/netns/B (the sender enters that namespace). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void xfer(int fd, char *b, size_t n, int out) {
  while (n) {
    ssize_t r = out ? send(fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, b, n, MSG_DONTWAIT);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (r <= 0) { perror("xfer"); exit(1); }
    b += r;
    n -= (size_t)r;
  }
}

/* One message of n bytes over k connections: part i (n/k bytes, the last takes the rest) on
 * fds[i], all parts progressed together, non-blocking, busy-polled. */
static void xfer_striped(const int *fds, int k, char *b, size_t n, int out) {
  size_t off[64], left[64];
  size_t part = n / (size_t)k, pending = 0;
  for (int i = 0; i < k; ++i) {
    off[i] = part * (size_t)i;
    left[i] = i == k - 1 ? n - off[i] : part;
    pending += left[i] > 0;
  }
  while (pending) {
    for (int i = 0; i < k; ++i) {
      if (!left[i]) continue;
      ssize_t r = out ? send(fds[i], b + off[i], left[i], MSG_NOSIGNAL | MSG_DONTWAIT)
                      : recv(fds[i], b + off[i], left[i], MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r <= 0) { perror("xfer_striped"); exit(1); }
      off[i] += (size_t)r;
      left[i] -= (size_t)r;
      if (!left[i]) --pending;
    }
  }
}

/* Socket buffers as rrt sets them (RRT_TCP_SOCKBUF's default, 4 MiB); TCP_RAW_SOCKBUF=N sets N
 * bytes, 0 leaves them to the kernel's autotuning. */
static void opts(int fd) {
  const char *env = getenv("TCP_RAW_SOCKBUF");
  int one = 1, buf = env ? atoi(env) : 4 << 20;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (buf <= 0) return;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
}

int main(int argc, char **argv) {
  const int stream = argc > 1 && !strcmp(argv[1], "stream");
  const size_t size = argc > 2 ? strtoul(argv[2], 0, 0) : 8;
  const int iters = argc > 3 ? atoi(argv[3]) : 10000;
  const int k = argc > 4 ? atoi(argv[4]) : 1;
  if (k < 1 || k > 64 || (k > 1 && !stream)) {
    fprintf(stderr, "STREAMS: 1-64, and only with stream\n");
    return 2;
  }
  const char *addr = getenv("TCP_RAW_ADDR"), *peerNs = getenv("TCP_RAW_PEER_NETNS");
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (addr && inet_pton(AF_INET, addr, &sa.sin_addr) != 1) return 2;
  socklen_t len = sizeof sa;
  if (bind(l, (void *)&sa, sizeof sa) || listen(l, 64) || getsockname(l, (void *)&sa, &len)) return 1;
  char *b = malloc(size ? size : 1);
  memset(b, 1, size);
  int fds[64];
  pid_t pid = fork();
  if (pid == 0) {
    if (peerNs) {
      int nfd = open(peerNs, O_RDONLY);
      if (nfd < 0 || setns(nfd, CLONE_NEWNET)) { perror("setns"); return 1; }
    }
    for (int i = 0; i < k; ++i) {
      fds[i] = socket(AF_INET, SOCK_STREAM, 0);
      opts(fds[i]);
      if (connect(fds[i], (void *)&sa, sizeof sa)) return 1;
    }
    char ack = 0;
    for (int i = 0; i < iters + 10; ++i) {
      if (k > 1) {
        xfer_striped(fds, k, b, size, 0);
        continue;
      }
      xfer(fds[0], b, size, 0);
      if (!stream) xfer(fds[0], b, size, 1);
    }
    if (stream) xfer(fds[0], &ack, 1, 1);
    return 0;
  }
  for (int i = 0; i < k; ++i) {
    fds[i] = accept(l, 0, 0);
    opts(fds[i]);
  }
  int fd = fds[0];
  char ack;
  for (int i = 0; i < 10; ++i) {
    if (k > 1) {
      xfer_striped(fds, k, b, size, 1);
      continue;
    }
    xfer(fd, b, size, 1);
    if (!stream) xfer(fd, b, size, 0);
  }
  double t0 = now();
  for (int i = 0; i < iters; ++i) {
    if (k > 1) {
      xfer_striped(fds, k, b, size, 1);
      continue;
    }
    xfer(fd, b, size, 1);
    if (!stream) xfer(fd, b, size, 0);
  }
  if (stream) xfer(fd, &ack, 1, 0);
  double t = now() - t0;
  if (stream)
    printf("stream %zu bytes x %d connections: %.1f MB/s\n", size, k, (double)size * iters / t / 1e6);
  else
    printf("pingpong %zu bytes: %.2f us one-way\n", size, t / iters / 2 * 1e6);
  waitpid(pid, 0, 0);
  return 0;
}
