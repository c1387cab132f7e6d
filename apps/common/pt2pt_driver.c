/* The frame of the point-to-point benchmarks (see pt2pt_driver.h). */
#include "pt2pt_driver.h"

#include <stdlib.h>
#include <string.h>

#include "device_mem.h"

int pt2pt_main(int argc, char **argv, const struct pt2pt_runtime *rt,
               const struct pt2pt_bench *bench) {
  struct bench_options opts;
  int code = bench_start(argc, argv, bench->kind, bench->program, rt->rank, &opts);
  if (code >= 0) return code;
  if (rt->nranks != 2) {
    if (rt->rank == 0)
      fprintf(stderr, "%s: this test requires exactly two ranks (got %d)\n", bench->program,
              rt->nranks);
    return 1;
  }

  const int on_device = opts.device == BENCH_DEV_CUDA && opts.device_buf[rt->rank];
  if (opts.device == BENCH_DEV_CUDA && bench_device_skip(rt->device_unavailable, bench->program,
                                                         rt->rank))
    return DEVICE_SKIP_EXIT;
  size_t bytes = opts.max_size > PT2PT_ACK_BYTES ? opts.max_size : PT2PT_ACK_BYTES;
  void *send = device_mem_or_host_alloc(on_device, bytes);
  void *recv = device_mem_or_host_alloc(on_device, bytes);
  if (!send || !recv) {
    fprintf(stderr, "%s: rank %d: out of %s memory\n", bench->program, rt->rank,
            on_device ? "device" : "host");
    device_mem_or_host_free(on_device, send);
    device_mem_or_host_free(on_device, recv);
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
  device_mem_or_host_free(on_device, recv);
  device_mem_or_host_free(on_device, send);
  return 0;
}
