/*
 * The frame of the point-to-point benchmarks, written once for every runtime (rrt here, MPI in
 * bench/mpi/): options, the two-rank check, page-aligned buffers touched before each size, the
 * size loop and OSU-style output. The timed loop itself is the benchmark's measure() callback, so
 * nothing sits between the runtime's calls while the clock runs.
 */
#ifndef RRT_APPS_COMMON_PT2PT_DRIVER_H
#define RRT_APPS_COMMON_PT2PT_DRIVER_H

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pt2pt_runtime {
  int rank, nranks;
  void (*sync)(void); /* both ranks meet (a barrier), outside timing */
  /* -d cuda: NULL when the runtime takes device buffers here, else why not (NULL function: the
   * runtime never does); device buffers come from device_mem.h. */
  const char *(*device_unavailable)(void);
};

struct pt2pt_args {
  void *send, *recv; /* at least max(size, PT2PT_ACK_BYTES) bytes each */
  size_t size, iters, skip, window;
  int rank;
};

/* Bandwidth tests acknowledge each window with a message of this many bytes. */
#define PT2PT_ACK_BYTES 4

struct pt2pt_bench {
  const char *program;  /* "rrt_latency", for -h and errors */
  const char *title;    /* "rrt Latency Test v0.1" */
  enum bench_kind kind; /* BENCH_LATENCY or BENCH_BW */
  /* Runs skip + iters rounds on both ranks; rank 0 returns the result (us or MB/s). */
  double (*measure)(const struct pt2pt_args *args);
};

/* Parses argv, runs every size, prints on rank 0. Returns the process exit code. Call it between
 * the runtime's init and finalize. */
int pt2pt_main(int argc, char **argv, const struct pt2pt_runtime *rt,
               const struct pt2pt_bench *bench);

#ifdef __cplusplus
}
#endif

#endif /* RRT_APPS_COMMON_PT2PT_DRIVER_H */
