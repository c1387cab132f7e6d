/* GPU collective suite (multi-process, through rrun): every predefined op on every datatype it
 * is defined for (rrt.h's table, long double aside) through allreduce, reduce, reduce_scatter
 * and scan with device buffers, compared byte for byte with the same collective on host
 * buffers; bcast, allgather, alltoall and gather on device buffers against the host results.
 * Exit 0 = pass, 77 = skipped (no GPU / driver / CUDA support), 1 = failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rrt/rrt.h>

#include "apps/common/device_mem.h"

static const char *unavailable(void) {
  int on = 0;
  if (rrt_cuda_support(&on) != RRT_SUCCESS || !on)
    return "rrt has no CUDA support here (no GPU or driver, RRT_CUDA=off, or a build without CUDA)";
  return device_mem_open();
}

/* Values that keep every op meaningful: small integers (as bytes of the type). */
static void fill(unsigned char *p, size_t bytes, size_t tsize, int rank, rrt_datatype_t t) {
  memset(p, 0, bytes);
  for (size_t i = 0; i < bytes / tsize; ++i) {
    unsigned char *e = p + i * tsize;
    int v = (int)((i * 7 + (size_t)rank * 3) % 5) + 1;
    switch (t) {
      case RRT_FLOAT: { float f = (float)v; memcpy(e, &f, 4); break; }
      case RRT_DOUBLE: { double d = v; memcpy(e, &d, 8); break; }
      case RRT_FLOAT16: { unsigned short h = (unsigned short)(0x3c00 + (v << 7)); memcpy(e, &h, 2); break; }
      case RRT_BFLOAT16: { unsigned short h = (unsigned short)(0x3f80 + (v << 3)); memcpy(e, &h, 2); break; }
      case RRT_C_FLOAT_COMPLEX: { float f[2] = {(float)v, 1.0f}; memcpy(e, f, 8); break; }
      case RRT_C_DOUBLE_COMPLEX: { double d[2] = {v, 1.0}; memcpy(e, d, 16); break; }
      case RRT_FLOAT_INT: { struct { float v; int i; } x = {(float)v, rank}; memcpy(e, &x, sizeof x); break; }
      case RRT_DOUBLE_INT: { struct { double v; int i; } x = {v, rank}; memcpy(e, &x, sizeof x); break; }
      case RRT_LONG_INT: { struct { long v; int i; } x = {v, rank}; memcpy(e, &x, sizeof x); break; }
      case RRT_2INT: { struct { int v; int i; } x = {v, rank}; memcpy(e, &x, sizeof x); break; }
      case RRT_SHORT_INT: { struct { short v; int i; } x = {(short)v, rank}; memcpy(e, &x, sizeof x); break; }
      default: e[0] = (unsigned char)v; break; /* integers (little-endian) and bool */
    }
  }
}

int main(int argc, char **argv) {
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  int rank, size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  const char *why = unavailable();
  if (why) {
    if (rank == 0) printf("SKIP: gpu_coll: %s\n", why);
    fflush(stdout);
    rrt_finalize();
    return DEVICE_SKIP_EXIT;
  }
  const size_t count = 1000, block = 100000; /* block: the data movement collectives' */
  size_t maxBytes = count * 32 * (size_t)size;
  if (maxBytes < block * (size_t)size) maxBytes = block * (size_t)size;
  unsigned char *hs = malloc(maxBytes), *hr = malloc(maxBytes), *back = malloc(maxBytes);
  void *ds = device_mem_alloc(maxBytes), *dr = device_mem_alloc(maxBytes);
  size_t *counts = malloc(sizeof(size_t) * (size_t)size);
  int failures = 0, cases = 0;
  for (rrt_op_t op = RRT_SUM; op <= RRT_MAXLOC; ++op) {
    for (rrt_datatype_t t = 0; t < RRT_PREDEFINED_TYPE_COUNT; ++t) {
      if (t == RRT_LONG_DOUBLE || t == RRT_LONG_DOUBLE_INT) continue;
      size_t ts = 0;
      rrt_type_size(t, &ts);
      const size_t bytes = count * ts;
      for (int coll = 0; coll < 4; ++coll) {
        for (int i = 0; i < size; ++i) counts[i] = count / (size_t)size;
        const size_t rbytes = coll == 2 ? counts[0] * ts : bytes;
        fill(hs, bytes, ts, rank, t);
        memset(hr, 0, bytes);
        int rh, rd;
        device_mem_from_host(ds, hs, bytes);
        device_mem_fill(dr, 0, bytes);
        switch (coll) {
          case 0: rh = rrt_allreduce(hs, hr, count, t, op, RRT_COMM_WORLD);
                  rd = rrt_allreduce(ds, dr, count, t, op, RRT_COMM_WORLD); break;
          case 1: rh = rrt_reduce(hs, hr, count, t, op, 0, RRT_COMM_WORLD);
                  rd = rrt_reduce(ds, dr, count, t, op, 0, RRT_COMM_WORLD); break;
          case 2: rh = rrt_reduce_scatter(hs, hr, counts, t, op, RRT_COMM_WORLD);
                  rd = rrt_reduce_scatter(ds, dr, counts, t, op, RRT_COMM_WORLD); break;
          default: rh = rrt_scan(hs, hr, count, t, op, RRT_COMM_WORLD);
                   rd = rrt_scan(ds, dr, count, t, op, RRT_COMM_WORLD); break;
        }
        if (rh != rd) {
          fprintf(stderr, "rank %d: op %d type %d coll %d: host %d, device %d\n", rank, op, t, coll, rh, rd);
          ++failures;
          continue;
        }
        if (rh != RRT_SUCCESS) continue; /* op not defined on the type: both refused it */
        ++cases;
        device_mem_to_host(back, dr, rbytes);
        if ((coll != 1 || rank == 0) && memcmp(back, hr, rbytes) != 0) {
          fprintf(stderr, "rank %d: op %d type %d coll %d: device result differs\n", rank, op, t, coll);
          ++failures;
        }
      }
    }
  }
  /* Data movement collectives. */
  fill(hs, block * (size_t)size, 1, rank, RRT_BYTE);
  device_mem_from_host(ds, hs, block * (size_t)size);
  int rc = rrt_bcast(ds, block, RRT_BYTE, 0, RRT_COMM_WORLD);
  rc |= rrt_bcast(hs, block, RRT_BYTE, 0, RRT_COMM_WORLD);
  device_mem_to_host(back, ds, block);
  if (rc || memcmp(back, hs, block)) { fprintf(stderr, "rank %d: bcast\n", rank); ++failures; }
  rc = rrt_allgather(ds, block, RRT_BYTE, dr, block, RRT_BYTE, RRT_COMM_WORLD);
  rc |= rrt_allgather(hs, block, RRT_BYTE, hr, block, RRT_BYTE, RRT_COMM_WORLD);
  device_mem_to_host(back, dr, block * (size_t)size);
  if (rc || memcmp(back, hr, block * (size_t)size)) { fprintf(stderr, "rank %d: allgather\n", rank); ++failures; }
  rc = rrt_alltoall(ds, block, RRT_BYTE, dr, block, RRT_BYTE, RRT_COMM_WORLD);
  rc |= rrt_alltoall(hs, block, RRT_BYTE, hr, block, RRT_BYTE, RRT_COMM_WORLD);
  device_mem_to_host(back, dr, block * (size_t)size);
  if (rc || memcmp(back, hr, block * (size_t)size)) { fprintf(stderr, "rank %d: alltoall\n", rank); ++failures; }
  int total = 0;
  rrt_allreduce(&failures, &total, 1, RRT_INT32, RRT_SUM, RRT_COMM_WORLD);
  if (rank == 0)
    printf("gpu_coll: %d ranks, %d op x type x collective cases, %s (%d failures)\n", size, cases,
           total ? "FAIL" : "pass", total);
  device_mem_free(ds);
  device_mem_free(dr);
  free(hs);
  free(hr);
  free(back);
  free(counts);
  rrt_finalize();
  return total ? 1 : 0;
}
