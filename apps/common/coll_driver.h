/*
 * The timing loop of the collective benchmarks, written once for every runtime (rrt here, MPI in
 * bench/mpi/), so that both measure the same thing. It follows OSU Micro-Benchmarks 7: per size, a
 * barrier, then skip + iters rounds of { t0; collective; t1; barrier }; each rank averages its
 * own timed rounds; rank 0 prints the mean, min and max of those per-rank averages.
 *
 * Ownership: the driver allocates and touches the buffers; the runtime table and the collective
 * description are the caller's. Any failure inside a callback is the callback's to report and
 * abort on (errors are printed with the runtime's own text).
 */
#ifndef RRT_APPS_COMMON_COLL_DRIVER_H
#define RRT_APPS_COMMON_COLL_DRIVER_H

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the driver needs from a runtime. */
struct coll_runtime {
  const char *type_prefix; /* "RRT_" or "MPI_", for the "# Datatype:" line */
  int rank, nranks;
  double (*wtime)(void);
  void (*barrier)(void);
  /* Reduces value to rank 0 as min, max and sum. */
  void (*reduce_stats)(double value, double *min, double *max, double *sum);
  int (*dtype_supported)(enum bench_dtype dtype);
  void (*abort_job)(void);
  /* -d cuda: NULL when the runtime takes device buffers here, else why not (NULL function: the
   * runtime never does). */
  const char *(*device_unavailable)(void);
  /* -a: host memory from the runtime's allocator (NULL on failure) and its release. */
  void *(*alloc_mem)(size_t bytes);
  void (*free_mem)(void *p);
};

/* One call of the collective under test. */
struct coll_args {
  void *send, *recv;
  size_t count;          /* elements per rank (per block for the gather/scatter family) */
  const size_t *counts;  /* reduce_scatter: the per-rank counts, summing to count */
  const int *int_counts; /* the same as int, for MPI, so no conversion sits inside the timing */
  enum bench_dtype dtype;
  int nranks;
};

enum coll_blocks { COLL_ONE_BLOCK, COLL_BLOCK_PER_RANK };

struct coll_bench {
  const char *program;          /* "rrt_allreduce", for -h */
  const char *title;            /* "rrt Allreduce Latency Test v0.1" */
  enum bench_kind kind;         /* BENCH_COLL or BENCH_BARRIER */
  enum coll_blocks send_blocks; /* send buffer size: one message or one per rank */
  enum coll_blocks recv_blocks;
  int split_counts; /* reduce_scatter: count is split across the ranks */
  void (*run)(const struct coll_args *args);
};

/* Parses argv, runs every size, prints on rank 0. Returns the process exit code. Call it between
 * the runtime's init and finalize. */
int coll_main(int argc, char **argv, const struct coll_runtime *rt, const struct coll_bench *bench);

#ifdef __cplusplus
}
#endif

#endif /* RRT_APPS_COMMON_COLL_DRIVER_H */
