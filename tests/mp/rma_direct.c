/* One-sided operations on the direct path (runtime/rma/direct.cc): contiguous puts and gets of
 * at least RRT_RMA_DIRECT_MIN bytes (auto: 256K) go through the transport's own put / get into
 * the target's window memory. Every rank puts to every rank (itself included) at several
 * displacements, with sizes straddling the threshold, in back-to-back epochs on the same
 * memory: fence, lock / unlock (exclusive and shared), lock_all with flush (put, get back
 * after a flush, request forms, several ops of both paths in one epoch), a window with
 * disp_unit 8, and an access past the end (RRT_ERR_RMA_RANGE, memory untouched). After every
 * epoch each rank compares every byte of its window with the image it expects.
 * With the direct path on over shared memory (2+ ranks, RRT_TRANSPORTS not tcp), a put needs
 * nothing from its target: rank 1 waits for the data outside rrt while rank 0 locks with
 * RRT_MODE_NOCHECK, puts and unlocks (on the ordinary path that would never finish).
 * Lists run it over shm and tcp, with the threshold at auto, small, and off. */
#include <sched.h>

#include "mp_util.h"

#define WIN ((size_t)8 << 20)

static size_t thr_;
static int direct_on_, shm_direct_;
static int right_;
static unsigned char *exp_;

static size_t slot_bytes(void) { return WIN / (size_t)mp_size; }

/* The pattern origin o writes in step st (size, displacement). */
static uint64_t pat(int o, int st, size_t size, size_t d) {
  return mp_seed(o, st, (int)size, (uint64_t)d * 7919u);
}

/* Fills the own window with a background for step st, builds the expected image from it,
 * and makes sure nobody writes before everyone has. */
static void background(unsigned char *mem, int st) {
  mp_fill(mem, WIN, mp_seed(mp_rank, 1000 + st, 0, 77));
  memcpy(exp_, mem, WIN);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
}

static void expect_put(int origin, int st, size_t size, size_t at, size_t d) {
  mp_fill(exp_ + at, size, pat(origin, st, size, d));
}

static void check_window(const unsigned char *mem, const char *what, size_t size, size_t d) {
  for (size_t i = 0; i < WIN; ++i)
    if (mem[i] != exp_[i]) {
      mp_fail(__FILE__, __LINE__, "%s (size %zu, displacement %zu): window byte %zu wrong", what,
              size, d, i);
      return;
    }
}

static void step(rrt_win_t win, unsigned char *mem, unsigned char *buf, unsigned char *buf2,
                 size_t size, size_t d) {
  const size_t slot = slot_bytes();
  const size_t mine = (size_t)mp_rank * slot + d; /* where I write in every target */
  int st = 0;

  /* fence: to every rank, itself included */
  background(mem, st);
  mp_fill(buf, size, pat(mp_rank, st, size, d));
  MP_CALL(rrt_win_fence(0, win));
  for (int t = 0; t < mp_size; ++t) MP_CALL(rrt_win_put(buf, size, RRT_BYTE, t, mine, win));
  MP_CALL(rrt_win_fence(0, win));
  for (int o = 0; o < mp_size; ++o) expect_put(o, st, size, (size_t)o * slot + d, d);
  check_window(mem, "fence put", size, d);
  /* fence again: get what the right neighbour holds from me, then overwrite it */
  memset(buf2, 0, size);
  MP_CALL(rrt_win_get(buf2, size, RRT_BYTE, right_, mine, win));
  MP_CALL(rrt_win_fence(0, win));
  MP_EXPECT_PATTERN(buf2, size, pat(mp_rank, st, size, d), "fence get (size %zu, disp %zu)", size, d);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));

  /* lock exclusive / unlock: put to the right neighbour; lock shared: read it back */
  background(mem, ++st);
  mp_fill(buf, size, pat(mp_rank, st, size, d));
  MP_CALL(rrt_win_lock(RRT_LOCK_EXCLUSIVE, right_, 0, win));
  MP_CALL(rrt_win_put(buf, size, RRT_BYTE, right_, mine, win));
  MP_CALL(rrt_win_unlock(right_, win));
  MP_CALL(rrt_win_lock(RRT_LOCK_SHARED, right_, 0, win));
  memset(buf2, 0, size);
  MP_CALL(rrt_win_get(buf2, size, RRT_BYTE, right_, mine, win));
  MP_CALL(rrt_win_unlock(right_, win));
  MP_EXPECT_PATTERN(buf2, size, pat(mp_rank, st, size, d), "lock get (size %zu, disp %zu)", size, d);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  {
    int left = (mp_rank + mp_size - 1) % mp_size;
    expect_put(left, st, size, (size_t)left * slot + d, d);
  }
  check_window(mem, "lock put", size, d);

  /* lock_all with flushes: put, flush, get it back; then the halves of a second pattern by
   * rput (waited) and put, a 64-byte put (ordinary path) just past the region and an
   * accumulate of 8 int64 after that (aligned), all in one epoch; read back with rget */
  background(mem, ++st);
  MP_CALL(rrt_win_lock_all(0, win));
  mp_fill(buf, size, pat(mp_rank, st, size, d));
  MP_CALL(rrt_win_put(buf, size, RRT_BYTE, right_, mine, win));
  MP_CALL(rrt_win_flush(right_, win));
  memset(buf2, 0, size);
  MP_CALL(rrt_win_get(buf2, size, RRT_BYTE, right_, mine, win));
  MP_CALL(rrt_win_flush(right_, win));
  MP_EXPECT_PATTERN(buf2, size, pat(mp_rank, st, size, d), "flush get (size %zu, disp %zu)", size, d);
  ++st;
  mp_fill(buf, size, pat(mp_rank, st, size, d));
  const size_t half = size / 2;
  rrt_request_t rq;
  MP_CALL(rrt_win_rput(buf, half, RRT_BYTE, right_, mine, win, &rq));
  MP_CALL(rrt_win_put(buf + half, size - half, RRT_BYTE, right_, mine + half, win));
  unsigned char small[64];
  mp_fill(small, sizeof small, pat(mp_rank, st, 64, d));
  MP_CALL(rrt_win_put(small, sizeof small, RRT_BYTE, right_, mine + size, win));
  int64_t add[8];
  for (int k = 0; k < 8; ++k) add[k] = (int64_t)mp_rank * 1000 + k;
  MP_CALL(rrt_win_accumulate(add, 8, RRT_INT64, right_, (mine + size + 64 + 7) & ~(size_t)7, RRT_SUM, win));
  MP_CALL(rrt_wait(&rq, RRT_STATUS_IGNORE));
  MP_CALL(rrt_win_flush_local(right_, win));
  memset(buf2, 0, size);
  MP_CALL(rrt_win_rget(buf2, size, RRT_BYTE, right_, mine, win, &rq));
  MP_CALL(rrt_wait(&rq, RRT_STATUS_IGNORE));
  MP_EXPECT_PATTERN(buf2, size, pat(mp_rank, st, size, d), "rget after flush (size %zu, disp %zu)",
                    size, d);
  MP_CALL(rrt_win_unlock_all(win));
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  {
    int left = (mp_rank + mp_size - 1) % mp_size;
    expect_put(left, st, size, (size_t)left * slot + d, d);
    mp_fill(exp_ + (size_t)left * slot + d + size, 64, pat(left, st, 64, d));
    for (int k = 0; k < 8; ++k) {
      unsigned char *p = exp_ + (((size_t)left * slot + d + size + 64 + 7) & ~(size_t)7) + 8 * k;
      int64_t v;
      memcpy(&v, p, 8);
      v = (int64_t)((uint64_t)v + (uint64_t)((int64_t)left * 1000 + k));
      memcpy(p, &v, 8);
    }
  }
  check_window(mem, "lock_all put", size, d);
}

/* A window with disp_unit 8: displacements in units. */
static void test_disp_unit(unsigned char *buf, unsigned char *buf2) {
  unsigned char *mem;
  rrt_win_t win;
  MP_CALL(rrt_win_allocate(WIN, 8, RRT_COMM_WORLD, &mem, &win));
  const size_t size = thr_ + 24, slot = slot_bytes() & ~(size_t)7;
  const size_t at = (size_t)mp_rank * slot + 8 * 3;
  background(mem, 50);
  mp_fill(buf, size, pat(mp_rank, 50, size, 3));
  MP_CALL(rrt_win_fence(0, win));
  MP_CALL(rrt_win_put(buf, size, RRT_BYTE, right_, at / 8, win));
  MP_CALL(rrt_win_fence(0, win));
  memset(buf2, 0, size);
  MP_CALL(rrt_win_get(buf2, size, RRT_BYTE, right_, at / 8, win));
  MP_CALL(rrt_win_fence(0, win));
  MP_EXPECT_PATTERN(buf2, size, pat(mp_rank, 50, size, 3), "disp_unit 8 get");
  int left = (mp_rank + mp_size - 1) % mp_size;
  expect_put(left, 50, size, (size_t)left * slot + 8 * 3, 3);
  check_window(mem, "disp_unit 8 put", size, 3);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  MP_CALL(rrt_win_free(&win));
}

/* A large access past the end: RRT_ERR_RMA_RANGE from the completing call, nothing written. */
static void test_range(rrt_win_t win, unsigned char *mem, unsigned char *buf) {
  const size_t size = thr_ + 1;
  background(mem, 60);
  mp_fill(buf, size, 1);
  MP_CALL(rrt_win_lock(RRT_LOCK_EXCLUSIVE, right_, 0, win));
  MP_CALL(rrt_win_put(buf, size, RRT_BYTE, right_, WIN - size + 1, win));
  MP_EXPECT_RC(RRT_ERR_RMA_RANGE, rrt_win_flush(right_, win));
  MP_CALL(rrt_win_get(buf, size, RRT_BYTE, right_, WIN - size / 2, win));
  MP_EXPECT_RC(RRT_ERR_RMA_RANGE, rrt_win_unlock(right_, win));
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  check_window(mem, "out-of-range put", size, WIN - size + 1);
}

/* Rank 0 puts into rank 1 while rank 1 is outside rrt, watching its memory. */
static void test_no_target_progress(rrt_win_t win, unsigned char *mem, unsigned char *buf) {
  const size_t size = thr_ + 8;
  background(mem, 70);
  if (mp_rank == 0) {
    mp_fill(buf, size, pat(0, 70, size, 0));
    MP_CALL(rrt_win_lock(RRT_LOCK_EXCLUSIVE, 1, RRT_MODE_NOCHECK, win));
    MP_CALL(rrt_win_put(buf, size, RRT_BYTE, 1, 0, win));
    MP_CALL(rrt_win_unlock(1, win));
  } else if (mp_rank == 1) {
    /* Its last 8 bytes differ from the background (a 2^-64 chance that they do not). */
    uint64_t want;
    mp_fill(buf, size, pat(0, 70, size, 0));
    memcpy(&want, buf + size - 8, 8);
    for (;;) {
      uint64_t now;
      __atomic_load(( uint64_t *)(mem + size - 8), &now, __ATOMIC_ACQUIRE);
      if (now == want) break;
      sched_yield();
    }
  }
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  if (mp_rank == 1) expect_put(0, 70, size, 0, 0);
  check_window(mem, "put without target progress", size, 0);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  right_ = (mp_rank + 1) % mp_size;
  const char *dm = getenv("RRT_RMA_DIRECT_MIN");
  const char *cma = getenv("RRT_SHM_CMA_THRESHOLD");
  const char *tx = getenv("RRT_TRANSPORTS");
  thr_ = 256 * 1024;
  if (dm && strcmp(dm, "off") != 0 && !mp_parse_size(dm, &thr_)) thr_ = 256 * 1024;
  if ((!dm || strcmp(dm, "auto") == 0) && cma && !mp_parse_size(cma, &thr_)) thr_ = 256 * 1024;
  if (thr_ < 64) thr_ = 64;
  direct_on_ = !(dm && strcmp(dm, "off") == 0);
  shm_direct_ = direct_on_ && !(tx && strstr(tx, "tcp") && !strstr(tx, "shm")) &&
                !(getenv("RRT_SHM_CMA") && strcmp(getenv("RRT_SHM_CMA"), "off") == 0);
  exp_ = mp_alloc(WIN);
  unsigned char *mem = mp_alloc(WIN), *buf = mp_alloc(WIN), *buf2 = mp_alloc(WIN);
  rrt_win_t win;
  MP_CALL(rrt_win_create(mem, WIN, 1, RRT_COMM_WORLD, &win));
  const size_t sizes[] = {thr_ - 1, thr_, thr_ + 7, ((size_t)1 << 20) + 13};
  const size_t disps[] = {0, 1, 4093};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; ++i)
    for (size_t j = 0; j < sizeof disps / sizeof *disps; ++j)
      if (disps[j] + sizes[i] + 160 <= slot_bytes()) step(win, mem, buf, buf2, sizes[i], disps[j]);
  test_range(win, mem, buf);
  if (shm_direct_ && mp_size >= 2) test_no_target_progress(win, mem, buf);
  MP_CALL(rrt_win_free(&win));
  test_disp_unit(buf, buf2);
  free(mem);
  free(buf);
  free(buf2);
  free(exp_);
  return mp_finish("rma_direct");
}
