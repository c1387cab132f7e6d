/* p2p_tcp_guard: ranks exchange checked messages in a ring (eager and rendezvous sizes) while
 * strangers connect to their TCP ports (tests/mp/tcp_auth.sh drives it), until the file named
 * by --go=PATH exists; then once more. Every byte received is checked, so anything a stranger
 * managed to inject as a frame would show up as a FAIL (or a hang). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mp_util.h"

static void ring_round(int round, size_t n, unsigned char *sb, unsigned char *rb) {
  const int to = (mp_rank + 1) % mp_size, from = (mp_rank + mp_size - 1) % mp_size;
  for (size_t i = 0; i < n; ++i) sb[i] = (unsigned char)(i * 7 + mp_rank * 13 + round);
  memset(rb, 0, n);
  rrt_status_t st;
  MP_CALL(rrt_sendrecv(sb, (int)n, RRT_BYTE, to, 5, rb, (int)n, RRT_BYTE, from, 5, RRT_COMM_WORLD,
                       &st));
  for (size_t i = 0; i < n; ++i)
    if (rb[i] != (unsigned char)(i * 7 + from * 13 + round)) {
      MP_EXPECT(0, "round %d size %zu: byte %zu wrong", round, n, i);
      break;
    }
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  const char *go = NULL;
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--go=", 5) == 0) go = argv[i] + 5;
  const size_t sizes[] = {8, 4096, 300000};
  unsigned char *sb = malloc(300000), *rb = malloc(300000);
  int done = 0, round = 0;
  const struct timespec pause = {0, 10 * 1000 * 1000};
  while (!done) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) ring_round(round, sizes[s], sb, rb);
    ++round;
    if (mp_rank == 0) done = go == NULL || access(go, F_OK) == 0;
    MP_CALL(rrt_bcast(&done, 1, RRT_INT32, 0, RRT_COMM_WORLD));
    if (!done) nanosleep(&pause, NULL);
  }
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) ring_round(round, sizes[s], sb, rb);
  free(sb);
  free(rb);
  return mp_finish("p2p_tcp_guard");
}
