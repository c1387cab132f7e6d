/* ring: rank 0 sends a token around the ring of all ranks, laps times; every rank adds one to
 * it on the way, so after the last lap rank 0 checks that it equals laps * size.
 *   rrun -n 4 apps/examples/ring [laps]      (default 10 laps) */
#include <rrt/rrt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *what) {
  if (rc == RRT_SUCCESS) return;
  fprintf(stderr, "ring: %s failed: %s\n", what, rrt_strerror(rc));
  rrt_abort(RRT_COMM_WORLD, 1); /* the others would wait for the token forever */
  exit(1);
}

int main(int argc, char **argv) {
  int rank = 0, size = 0;
  check(rrt_init(&argc, &argv), "rrt_init");
  check(rrt_comm_rank(RRT_COMM_WORLD, &rank), "rrt_comm_rank");
  check(rrt_comm_size(RRT_COMM_WORLD, &size), "rrt_comm_size");
  long laps = argc > 1 ? strtol(argv[1], NULL, 10) : 10;
  if (laps < 1) {
    if (rank == 0) fprintf(stderr, "usage: ring [laps >= 1]\n");
    check(rrt_finalize(), "rrt_finalize");
    return 1;
  }

  const int tag = 7;
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  int64_t token = 0;
  for (long lap = 0; lap < laps; ++lap) {
    if (rank == 0) {
      token += 1;
      check(rrt_send(&token, 1, RRT_INT64, next, tag, RRT_COMM_WORLD), "rrt_send");
      check(rrt_recv(&token, 1, RRT_INT64, prev, tag, RRT_COMM_WORLD, RRT_STATUS_IGNORE),
            "rrt_recv");
    } else {
      check(rrt_recv(&token, 1, RRT_INT64, prev, tag, RRT_COMM_WORLD, RRT_STATUS_IGNORE),
            "rrt_recv");
      token += 1;
      check(rrt_send(&token, 1, RRT_INT64, next, tag, RRT_COMM_WORLD), "rrt_send");
    }
  }

  int ok = 1;
  if (rank == 0) {
    int64_t expected = laps * size;
    ok = token == expected;
    printf("ring: %d ranks, %ld laps: token %lld, expected %lld: %s\n", size, laps,
           (long long)token, (long long)expected, ok ? "ok" : "WRONG");
  }
  check(rrt_finalize(), "rrt_finalize");
  return ok ? 0 : 1;
}
