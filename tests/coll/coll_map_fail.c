/* A rank that cannot map a peer's rrt_alloc_mem buffer (here: it ran out of file descriptors)
 * fails the shared-memory allreduce with RRT_ERR_INTERNAL, and so does every peer that waits
 * for it, instead of hanging (runtime/coll/node_segment.h, markFailed). The last rank is the
 * one that fails.
 *
 * Prints "PASS coll_map_fail (N ranks)" on rank 0, "FAIL ..." lines otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <rrt/rrt.h>

int main(int argc, char** argv) {
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  int rank, size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  /* The shared-memory collectives need the shm transport (the suite also runs over tcp, verbs). */
  const char* transports = getenv("RRT_TRANSPORTS");
  if (transports && !strstr(transports, "shm")) {
    if (rank == 0) printf("SKIP coll_map_fail: RRT_TRANSPORTS=%s has no shared memory\n", transports);
    rrt_finalize();
    return 0;
  }
  const size_t count = 1 << 18, bytes = count * sizeof(float);
  /* First a large call on malloc'd buffers: the communicator's full segment exists after it. */
  float* a = malloc(bytes);
  float* b = malloc(bytes);
  for (size_t i = 0; i < count; i++) a[i] = 1.0f;
  int rc = rrt_allreduce(a, b, count, RRT_FLOAT, RRT_SUM, RRT_COMM_WORLD);
  if (rc != RRT_SUCCESS || b[count - 1] != (float)size) {
    printf("FAIL rank %d: the first allreduce: %s\n", rank, rrt_strerror(rc));
    return 1;
  }
  float *in = NULL, *out = NULL;
  if (rrt_alloc_mem(bytes, &in) != RRT_SUCCESS || rrt_alloc_mem(bytes, &out) != RRT_SUCCESS) {
    printf("FAIL rank %d: rrt_alloc_mem\n", rank);
    return 1;
  }
  for (size_t i = 0; i < count; i++) in[i] = 1.0f;
  struct rlimit saved;
  getrlimit(RLIMIT_NOFILE, &saved);
  if (rank == size - 1) {
    /* No new descriptor: opening a peer's memory through /proc fails. */
    struct rlimit lim = saved;
    lim.rlim_cur = 0;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      printf("FAIL rank %d: setrlimit\n", rank);
      return 1;
    }
  }
  rc = rrt_allreduce(in, out, count, RRT_FLOAT, RRT_SUM, RRT_COMM_WORLD);
  int failed = 0;
  if (rc != RRT_ERR_INTERNAL) {
    printf("FAIL rank %d: the allreduce returned %s, want RRT_ERR_INTERNAL\n", rank, rrt_strerror(rc));
    failed = 1;
  }
  /* Each rank's exit status carries its verdict (rrun fails when one fails). */
  if (rank == 0 && !failed) printf("PASS coll_map_fail (%d ranks)\n", size);
  fflush(stdout);
  setrlimit(RLIMIT_NOFILE, &saved);
  rrt_free_mem(in);
  rrt_free_mem(out);
  free(a);
  free(b);
  rrt_finalize();
  return failed;
}
