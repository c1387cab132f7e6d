/* bench/tcp_raw.c: what this machine's TCP loopback gives without any MPI: a ping-pong of SIZE
 * bytes (one-way latency, busy-polled non-blocking recv like rrt's progress) and a one-way
 * stream of SIZE-byte writes (bandwidth), between two processes.
 *   cc -O2 -o tcp_raw bench/tcp_raw.c && ./tcp_raw [pingpong|stream] SIZE ITERS */
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

static void opts(int fd) {
  int one = 1, buf = 4 << 20;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
}

int main(int argc, char **argv) {
  const int stream = argc > 1 && !strcmp(argv[1], "stream");
  const size_t size = argc > 2 ? strtoul(argv[2], 0, 0) : 8;
  const int iters = argc > 3 ? atoi(argv[3]) : 10000;
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof sa;
  if (bind(l, (void *)&sa, sizeof sa) || listen(l, 1) || getsockname(l, (void *)&sa, &len)) return 1;
  char *b = malloc(size ? size : 1);
  memset(b, 1, size);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    opts(fd);
    if (connect(fd, (void *)&sa, sizeof sa)) return 1;
    char ack = 0;
    for (int i = 0; i < iters + 10; ++i) {
      xfer(fd, b, size, 0);
      if (!stream) xfer(fd, b, size, 1);
    }
    if (stream) xfer(fd, &ack, 1, 1);
    return 0;
  }
  int fd = accept(l, 0, 0);
  opts(fd);
  char ack;
  for (int i = 0; i < 10; ++i) {
    xfer(fd, b, size, 1);
    if (!stream) xfer(fd, b, size, 0);
  }
  double t0 = now();
  for (int i = 0; i < iters; ++i) {
    xfer(fd, b, size, 1);
    if (!stream) xfer(fd, b, size, 0);
  }
  if (stream) xfer(fd, &ack, 1, 0);
  double t = now() - t0;
  if (stream)
    printf("stream %zu bytes: %.1f MB/s\n", size, (double)size * iters / t / 1e6);
  else
    printf("pingpong %zu bytes: %.2f us one-way\n", size, t / iters / 2 * 1e6);
  waitpid(pid, 0, 0);
  return 0;
}
