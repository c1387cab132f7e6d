/* Shared-memory windows on the rrt C API: rrt_comm_split_type(RRT_COMM_TYPE_SHARED) and
 * rrt_win_allocate_shared / rrt_win_shared_query. Every rank gets a part of a different size
 * (odd ranks an empty one), writes it with plain stores, and after a barrier reads every other
 * rank's part through its own mapping; parts are back to back in rank order. Then puts and
 * accumulates through the window land in the neighbour's part and are seen by loads; the
 * segment's name is gone from /dev/shm while the window lives; error codes for a window that is
 * not shared and a bad rank. Any number of ranks (all on one node). */
#include <dirent.h>

#include "mp_util.h"

static size_t part_bytes(int r) { return r % 2 ? 0 : 4096 + 64 * (size_t)r; }

static unsigned char pattern(int r, size_t i) { return (unsigned char)(r * 31 + i * 7 + 1); }

/* Files in /dev/shm that belong to shared windows (rrt-<job>-w<rank>-<serial>). */
static int window_segments(void) {
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, "rrt-", 4) == 0 && strstr(e->d_name, "-w") != NULL) ++n;
  closedir(d);
  return n;
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  rrt_comm_t node = RRT_COMM_NULL;
  /* key = -rank: the node communicator reverses the ranks, so its order is its own. */
  MP_CALL(rrt_comm_split_type(RRT_COMM_WORLD, RRT_COMM_TYPE_SHARED, -mp_rank, &node));
  int me, n;
  MP_CALL(rrt_comm_rank(node, &me));
  MP_CALL(rrt_comm_size(node, &n));
  MP_EXPECT(n == mp_size, "one node: split_type gave %d of %d ranks", n, mp_size);
  MP_EXPECT(me == mp_size - 1 - mp_rank, "node rank %d, expected %d", me, mp_size - 1 - mp_rank);
  rrt_comm_t none = RRT_COMM_WORLD;
  MP_CALL(rrt_comm_split_type(RRT_COMM_WORLD, RRT_UNDEFINED, 0, &none));
  MP_EXPECT(none == RRT_COMM_NULL, "RRT_UNDEFINED gave a communicator");
  rrt_comm_t bad;
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_comm_split_type(RRT_COMM_WORLD, 7, 0, &bad));

  unsigned char *mine = NULL;
  rrt_win_t win = RRT_WIN_NULL;
  MP_CALL(rrt_win_allocate_shared(part_bytes(me), 4, node, &mine, &win));
  MP_EXPECT(window_segments() == 0, "a window's segment is still named in /dev/shm");
  for (size_t i = 0; i < part_bytes(me); ++i) mine[i] = pattern(me, i);
  MP_CALL(rrt_barrier(node));

  unsigned char *expect_next = NULL;
  for (int r = 0; r < n; ++r) {
    size_t size = 1;
    int unit = 0;
    unsigned char *base = (unsigned char *)1;
    MP_CALL(rrt_win_shared_query(win, r, &size, &unit, &base));
    MP_EXPECT(size == part_bytes(r), "rank %d's part: %zu bytes, expected %zu", r, size,
              part_bytes(r));
    MP_EXPECT(unit == 4, "rank %d's disp_unit %d", r, unit);
    if (size == 0) {
      MP_EXPECT(base == NULL, "rank %d's empty part has an address", r);
      continue;
    }
    if (r == me) MP_EXPECT(base == mine, "my part is not where rrt_win_allocate_shared put it");
    if (expect_next) MP_EXPECT(base == expect_next, "rank %d's part does not follow the last", r);
    expect_next = base + size;
    size_t bad_at = size;
    for (size_t i = 0; i < size && bad_at == size; ++i)
      if (base[i] != pattern(r, i)) bad_at = i;
    MP_EXPECT(bad_at == size, "rank %d's part differs at byte %zu", r, bad_at);
  }
  size_t size;
  int unit;
  unsigned char *first;
  MP_CALL(rrt_win_shared_query(win, RRT_PROC_NULL, &size, &unit, &first));
  unsigned char *zero_base;
  MP_CALL(rrt_win_shared_query(win, 0, &size, &unit, &zero_base));
  MP_EXPECT(first == zero_base, "RRT_PROC_NULL is not the first non-empty part (rank 0's)");
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_win_shared_query(win, n, &size, &unit, &first));

  /* Puts into the next even rank's part and accumulates into rank 0's, seen by loads after a
   * fence. */
  MP_CALL(rrt_barrier(node));  /* everyone has read rank 0's part: it may change now */
  const int64_t zero = 0;
  if (me == 0) memcpy(mine + 2048, &zero, sizeof zero);
  MP_CALL(rrt_win_fence(0, win));
  int evens = (n + 1) / 2;
  int target = ((me / 2 + 1) % evens) * 2;
  if (me % 2 == 0) {
    uint32_t v[4] = {(uint32_t)me, 11, 22, 33};
    MP_CALL(rrt_win_put(v, 4, RRT_UINT32, target, 1, win));
  }
  int64_t one = 1;
  MP_CALL(rrt_win_accumulate(&one, 1, RRT_INT64, 0, 512, RRT_SUM, win));
  MP_CALL(rrt_win_fence(0, win));
  if (me % 2 == 0) {
    uint32_t *w32 = (uint32_t *)mine;
    int from = ((me / 2 - 1 + evens) % evens) * 2;
    MP_EXPECT(w32[1] == (uint32_t)from && w32[2] == 11 && w32[3] == 22 && w32[4] == 33,
              "put from rank %d: %u %u %u %u", from, w32[1], w32[2], w32[3], w32[4]);
  }
  int64_t sum;
  memcpy(&sum, zero_base + 2048, sizeof sum);
  MP_EXPECT(sum == n, "rank 0's counter is %lld after %d accumulates of 1", (long long)sum, n);
  MP_CALL(rrt_win_free(&win));

  /* Not a shared window: rrt_win_shared_query refuses it. */
  unsigned char *plain;
  MP_CALL(rrt_win_allocate(64, 1, node, &plain, &win));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_win_shared_query(win, 0, &size, &unit, &first));
  MP_CALL(rrt_win_free(&win));
  MP_CALL(rrt_comm_free(&node));
  mp_finish("rma_shared");
  return 0;
}
