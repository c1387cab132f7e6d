/* hello: every rank prints its rank, the world size and the host it runs on.
 *   rrun -n 4 apps/examples/hello */
#include <rrt/rrt.h>
#include <stdio.h>
#include <stdlib.h>

/* Errors are values: report the failing call with rrt's own text and stop. */
static void check(int rc, const char *what) {
  if (rc == RRT_SUCCESS) return;
  fprintf(stderr, "hello: %s failed: %s\n", what, rrt_strerror(rc));
  exit(1);
}

int main(int argc, char **argv) {
  int rank = 0, size = 0;
  char host[256];
  check(rrt_init(&argc, &argv), "rrt_init");
  check(rrt_comm_rank(RRT_COMM_WORLD, &rank), "rrt_comm_rank");
  check(rrt_comm_size(RRT_COMM_WORLD, &size), "rrt_comm_size");
  check(rrt_get_processor_name(host, sizeof host), "rrt_get_processor_name");
  printf("Hello from rank %d of %d on %s\n", rank, size, host);
  check(rrt_finalize(), "rrt_finalize");
  return 0;
}
