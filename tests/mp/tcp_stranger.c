/* tcp_stranger HOST PORT MODE: a process outside the job that connects to a rank's TCP port.
 *   garbage    writes 4 KiB of bytes that are not an rrt handshake (some shaped like frames)
 *   badsecret  writes a well-formed Hello with a wrong secret, then an active-message frame
 * Not linked with rrt; used by tcp_auth.sh. Exits 0 when it could connect and write. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: tcp_stranger HOST PORT garbage|badsecret\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
  if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 || connect(fd, (void *)&sa, sizeof sa)) {
    perror("tcp_stranger: connect");
    return 1;
  }
  unsigned char buf[4096];
  size_t n = sizeof buf;
  if (strcmp(argv[3], "garbage") == 0) {
    for (size_t i = 0; i < n; ++i) buf[i] = (unsigned char)(i * 131 + 17);
    /* a frame-shaped header at the start: len 24, kind AM, id Eager */
    const unsigned char frame[8] = {24, 0, 0, 0, 1, 1, 0, 0};
    memcpy(buf, frame, sizeof frame);
  } else {
    /* Hello (runtime/transport/tcp/frame.h): magic, 32-byte secret, rank 1, peer 0, size 2 */
    memset(buf, 0, n);
    memcpy(buf, "rrt-tcp1", 8);
    memset(buf + 8, 0xA5, 32);
    int32_t rank = 1, peer = 0;
    uint32_t size = 2;
    memcpy(buf + 40, &rank, 4);
    memcpy(buf + 44, &peer, 4);
    memcpy(buf + 48, &size, 4);
    /* then an AM frame carrying an eager header for tag 5 */
    const unsigned char frame[8] = {24, 0, 0, 0, 1, 1, 0, 0};
    memcpy(buf + 64, frame, sizeof frame);
    n = 64 + 8 + 24;
  }
  if (write(fd, buf, n) != (ssize_t)n) {
    perror("tcp_stranger: write");
    return 1;
  }
  close(fd);
  return 0;
}
