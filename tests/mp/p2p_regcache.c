/*
 * Registration-cache safety: buffers are freed and reallocated at the same address between
 * rendezvous transfers, and every transfer must carry the new contents.
 *
 * Rank 0 sends to rank 1 (other ranks only take part in mp_finish). Each round both sides
 * mmap their buffer at the same address as the round before (MAP_FIXED_NOREPLACE after the
 * munmap), fill or clear it, and move SIZE bytes (default 1 MiB: rendezvous). A cached
 * registration left over from the unmapped range would point at the old pages: on a NIC that is
 * stale data; on the software RDMA device with SOFTRDMA_PIN_CHECK=1 (tests/softrdma/pin_check.h)
 * it is an access error. Then the same with malloc/free (the heap keeps its pages, so a cache hit
 * there is correct and must still deliver the new contents), and with madvise(MADV_DONTNEED),
 * which swaps the pages for zero pages.
 * Options: --size=N (bytes per message), --rounds=N.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "mp_util.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static void *map_at(void *want, size_t bytes) {
  void *p = mmap(want, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (want ? MAP_FIXED_NOREPLACE : 0), -1, 0);
  MP_EXPECT(p != MAP_FAILED, "mmap(%p, %zu) failed", want, bytes);
  if (p == MAP_FAILED) exit(1);
  MP_EXPECT(!want || p == want, "mmap at %p gave %p: the address was taken", want, p);
  return p;
}

static void transfer(void *buf, size_t bytes, int round, const char *what) {
  uint64_t seed = mp_seed(0, 1, round, bytes ^ (uint64_t)(uintptr_t)what[0] << 40);
  if (mp_rank == 0) {
    mp_fill(buf, bytes, seed);
    MP_CALL(rrt_send(buf, bytes, RRT_BYTE, 1, round, RRT_COMM_WORLD));
  } else if (mp_rank == 1) {
    rrt_status_t st;
    memset(buf, 0xee, bytes);
    MP_CALL(rrt_recv(buf, bytes, RRT_BYTE, 0, round, RRT_COMM_WORLD, &st));
    MP_EXPECT(st.bytes == bytes, "%s round %d: %zu bytes received", what, round, st.bytes);
    MP_EXPECT_PATTERN(buf, bytes, seed, "%s round %d (%zu bytes)", what, round, bytes);
  }
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t bytes = mp_arg_size(argc, argv, "--size", 1 << 20);
  int rounds = (int)mp_arg_size(argc, argv, "--rounds", 6);
  if (mp_rank <= 1 && mp_size >= 2) {
    /* mmap / munmap at one address */
    void *addr = NULL;
    for (int r = 0; r < rounds; ++r) {
      void *buf = map_at(addr, bytes);
      addr = buf;
      transfer(buf, bytes, r, "mmap");
      munmap(buf, bytes);
    }
    /* malloc / free: the heap reuses the address and keeps its pages */
    void *prev = NULL;
    int reused = 0;
    for (int r = 0; r < rounds; ++r) {
      void *buf = malloc(bytes);
      reused += buf == prev;
      prev = buf;
      transfer(buf, bytes, 100 + r, "malloc");
      free(buf);
    }
    if (mp_rank == 0) printf("p2p_regcache: malloc reused its address in %d of %d rounds\n", reused, rounds - 1);
    /* madvise(DONTNEED): same mapping, fresh pages */
    void *buf = map_at(NULL, bytes);
    for (int r = 0; r < rounds; ++r) {
      transfer(buf, bytes, 200 + r, "madvise");
      madvise(buf, bytes, MADV_DONTNEED);
    }
    munmap(buf, bytes);
  }
  return mp_finish("p2p_regcache");
}
