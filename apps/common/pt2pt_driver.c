/* The frame of the point-to-point benchmarks (see pt2pt_driver.h). */
#include "pt2pt_driver.h"

#include <stdlib.h>
#include <string.h>

#include "device_mem.h"

int pt2pt_main(int argc, char **argv, const struct pt2pt_runtime *rt,
               const struct pt2pt_bench *bench) {
  struct bench_options opts;
  char error[256] = "";
  switch (bench_parse(argc, argv, bench->kind, &opts, error, sizeof error)) {
    case BENCH_HELP:
      if (rt->rank == 0) bench_usage(stdout, bench->program, bench->kind);
      return 0;
    case BENCH_BAD_USAGE:
      if (rt->rank == 0) {
        fprintf(stderr, "%s: %s\n\n", bench->program, error);
        bench_usage(stderr, bench->program, bench->kind);
      }
      return 1;
    case BENCH_RUN: break;
  }
  if (rt->nranks != 2) {
    if (rt->rank == 0)
      fprintf(stderr, "%s: this test requires exactly two ranks (got %d)\n", bench->program,
              rt->nranks);
    return 1;
  }

  const int on_device = opts.device == BENCH_DEV_CUDA && opts.device_buf[rt->rank];
  if (opts.device == BENCH_DEV_CUDA) {
    const char *why = bench_device_check(rt->device_unavailable);
    if (why) {
      if (rt->rank == 0) {
        printf("# %s: -d cuda: %s: skipped\n", bench->program, why);
        fflush(stdout); /* the launcher may end this rank as soon as a peer exits 77 */
      }
      return DEVICE_SKIP_EXIT;
    }
  }
  size_t bytes = opts.max_size > PT2PT_ACK_BYTES ? opts.max_size : PT2PT_ACK_BYTES;
  void *send = on_device ? device_mem_alloc(bytes) : bench_alloc(bytes);
  void *recv = on_device ? device_mem_alloc(bytes) : bench_alloc(bytes);
  if (!send || !recv) {
    fprintf(stderr, "%s: rank %d: out of %s memory\n", bench->program, rt->rank,
            on_device ? "device" : "host");
    if (on_device) {
      device_mem_free(send);
      device_mem_free(recv);
    } else {
      free(send);
      free(recv);
    }
    return 1;
  }
  if (rt->rank == 0) {
    bench_print_title(bench->title);
    bench_print_pt2pt_header(bench->kind);
  }
  for (size_t size = opts.min_size; size <= opts.max_size; size = size ? size * 2 : 1) {
    /* Touch the data as OSU does, so first-touch page faults stay out of the timing. */
    if (on_device) {
      device_mem_fill(send, 'a', size);
      device_mem_fill(recv, 'b', size);
    } else {
      memset(send, 'a', size);
      memset(recv, 'b', size);
    }
    struct pt2pt_args args = {
        send, recv, size, bench_iters(&opts, size), bench_skip(&opts, size), opts.window, rt->rank};
    rt->sync();
    double value = bench->measure(&args);
    if (rt->rank == 0) bench_print_pt2pt_row(size, value);
  }
  if (on_device) {
    device_mem_free(recv);
    device_mem_free(send);
  } else {
    free(recv);
    free(send);
  }
  return 0;
}
