/* The collective timing loop shared by the rrt apps and their MPI counterparts (OSU 7 method). */
#include "coll_driver.h"

#include <stdlib.h>
#include <string.h>

#include "device_mem.h"

/* Per-rank average latency in microseconds of one size. */
static double time_size(const struct coll_runtime *rt, const struct coll_bench *bench,
                        const struct coll_args *args, size_t iters, size_t skip) {
  double total = 0.0;
  rt->barrier();
  for (size_t i = 0; i < iters + skip; ++i) {
    double t0 = rt->wtime();
    bench->run(args);
    double t1 = rt->wtime();
    /* OSU's barrier keeps one rank's late start out of the next round; barrier itself has none */
    if (bench->kind == BENCH_COLL) rt->barrier();
    if (i >= skip) total += t1 - t0;
  }
  return total * 1e6 / (double)iters;
}

/* Splits count elements over the ranks as evenly as possible (the first ones get the rest). */
static void split(size_t count, int nranks, size_t *counts, int *int_counts) {
  for (int r = 0; r < nranks; ++r) {
    counts[r] = count / (size_t)nranks + ((size_t)r < count % (size_t)nranks ? 1 : 0);
    int_counts[r] = (int)counts[r];
  }
}

int coll_main(int argc, char **argv, const struct coll_runtime *rt,
              const struct coll_bench *bench) {
  struct bench_options opts;
  int code = bench_start(argc, argv, bench->kind, bench->program, rt->rank, &opts);
  if (code >= 0) return code;
  if (rt->nranks < 2) {
    if (rt->rank == 0)
      fprintf(stderr, "%s: this test requires at least two ranks\n", bench->program);
    return 1;
  }
  if (!rt->dtype_supported(opts.dtype)) {
    if (rt->rank == 0)
      fprintf(stderr, "%s: datatype %s is not supported by this runtime\n", bench->program,
              bench_dtype_name(opts.dtype));
    return 1;
  }

  const int on_device = opts.device == BENCH_DEV_CUDA;
  if (on_device && bench_device_skip(rt->device_unavailable, bench->program, rt->rank))
    return DEVICE_SKIP_EXIT;
  size_t np = (size_t)rt->nranks;
  size_t max = opts.kind == BENCH_COLL ? opts.max_size : 0;
  size_t send_bytes = max * (bench->send_blocks == COLL_BLOCK_PER_RANK ? np : 1);
  size_t recv_bytes = max * (bench->recv_blocks == COLL_BLOCK_PER_RANK ? np : 1);
  const int lib = opts.lib_alloc && !on_device;
  void *send = lib ? rt->alloc_mem(send_bytes ? send_bytes : 1)
                   : device_mem_or_host_alloc(on_device, send_bytes);
  void *recv = lib ? rt->alloc_mem(recv_bytes ? recv_bytes : 1)
                   : device_mem_or_host_alloc(on_device, recv_bytes);
  size_t *counts = calloc(np, sizeof *counts);
  int *int_counts = calloc(np, sizeof *int_counts);
  if (!send || !recv || !counts || !int_counts) {
    fprintf(stderr, "%s: rank %d: out of memory\n", bench->program, rt->rank);
    rt->abort_job();
    return 1;
  }
  /* Touch the buffers before timing, with values that are normal numbers in every -T type. */
  if (on_device) {
    device_mem_fill(send, 1, send_bytes);
    device_mem_fill(recv, 0, recv_bytes);
  } else {
    memset(send, 1, send_bytes ? send_bytes : 1);
    memset(recv, 0, recv_bytes ? recv_bytes : 1);
  }

  if (rt->rank == 0) {
    printf("\n");
    bench_print_title(bench->title);
    bench_print_coll_header(&opts, rt->type_prefix);
  }
  size_t elem = bench_dtype_size(opts.dtype);
  size_t first = opts.kind == BENCH_COLL ? (opts.min_size ? opts.min_size : 1) : 0;
  for (size_t size = first; size <= max; size = size ? size * 2 : 1) {
    struct coll_args args = {send, recv, size / elem, counts, int_counts, opts.dtype, rt->nranks};
    if (opts.kind == BENCH_COLL && args.count == 0) continue; /* smaller than one element */
    if (bench->split_counts) split(args.count, rt->nranks, counts, int_counts);
    size_t iters = bench_iters(&opts, size);
    double latency = time_size(rt, bench, &args, iters, bench_skip(&opts, size));
    double min = 0.0, maxv = 0.0, sum = 0.0;
    rt->reduce_stats(latency, &min, &maxv, &sum);
    if (rt->rank == 0) bench_print_coll_row(&opts, size, sum / (double)np, min, maxv, iters);
    rt->barrier();
    if (opts.kind == BENCH_BARRIER) break;
  }
  free(int_counts);
  free(counts);
  if (lib) {
    rt->free_mem(recv);
    rt->free_mem(send);
  } else {
    device_mem_or_host_free(on_device, recv);
    device_mem_or_host_free(on_device, send);
  }
  return 0;
}
