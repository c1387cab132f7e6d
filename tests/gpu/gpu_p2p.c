/* GPU point-to-point suite (multi-process, through rrun): ranks pair up (0-1, 2-3, ...) and send
 * device->device, device->host and host->device messages of every size class (empty, eager,
 * bounce limit and beyond, rendezvous, pipelined with a partial last chunk) both ways, checking
 * every byte. With --probe it only says whether device buffers work here.
 * Exit 0 = pass, 77 = skipped (no GPU, no driver, or rrt without CUDA support), 1 = failure. */
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

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = (unsigned char)(i * 31u + seed);
}

int main(int argc, char **argv) {
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  int rank, size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  const char *why = unavailable();
  if (why) {
    if (rank == 0) printf("SKIP: gpu_p2p: %s\n", why);
    fflush(stdout);
    rrt_finalize();
    return DEVICE_SKIP_EXIT;
  }
  if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
    rrt_finalize();
    return 0;
  }
  const size_t sizes[] = {0, 1, 4096, 65536, 65537, 300000, 1u << 20, (4u << 20) + 3};
  const char *kinds[] = {"DD", "DH", "HD"};
  const int peer = rank ^ 1;
  int failures = 0;
  if (peer < size) {
    size_t max = (4u << 20) + 3;
    unsigned char *hs = malloc(max), *hr = malloc(max), *expect = malloc(max);
    void *ds = device_mem_alloc(max), *dr = device_mem_alloc(max);
    if (!hs || !hr || !expect || !ds || !dr) {
      fprintf(stderr, "rank %d: allocation failed\n", rank);
      return 1;
    }
    for (int k = 0; k < 3; ++k) {
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        const size_t n = sizes[s];
        for (int dir = 0; dir < 2; ++dir) {
          const int sender = (rank & ~1) + dir;
          /* kinds[k][0] is the sender's buffer, [1] the receiver's */
          const int me_send = rank == sender;
          const int dev = kinds[k][me_send ? 0 : 1] == 'D';
          const unsigned seed = (unsigned)(k * 100 + s * 7 + dir);
          if (me_send) {
            fill(hs, n, seed);
            void *buf = hs;
            if (dev) {
              device_mem_from_host(ds, hs, n);
              buf = ds;
            }
            if (rrt_send(buf, n, RRT_BYTE, peer, 1, RRT_COMM_WORLD) != RRT_SUCCESS) ++failures;
          } else {
            void *buf = hr;
            if (dev) {
              device_mem_fill(dr, 0, n);
              buf = dr;
            } else {
              memset(hr, 0, n);
            }
            rrt_status_t st;
            if (rrt_recv(buf, n, RRT_BYTE, peer, 1, RRT_COMM_WORLD, &st) != RRT_SUCCESS || st.bytes != n)
              ++failures;
            if (dev) device_mem_to_host(hr, dr, n);
            fill(expect, n, seed);
            if (memcmp(hr, expect, n) != 0) {
              fprintf(stderr, "rank %d: %s %zu bytes: wrong data\n", rank, kinds[k], n);
              ++failures;
            }
          }
        }
      }
    }
    device_mem_free(ds);
    device_mem_free(dr);
    free(hs);
    free(hr);
    free(expect);
  }
  int total = 0;
  rrt_allreduce(&failures, &total, 1, RRT_INT32, RRT_SUM, RRT_COMM_WORLD);
  if (rank == 0) printf("gpu_p2p: %d ranks, %s (%d failures)\n", size, total ? "FAIL" : "pass", total);
  rrt_finalize();
  return total ? 1 : 0;
}
