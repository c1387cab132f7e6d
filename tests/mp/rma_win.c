/* One-sided communication on the rrt C API (rrt_win_*), any number of ranks: every window kind
 * with put / get (plain and request forms) at sizes around the inline-header limit and the
 * eager limit (so it straddles eager and rendezvous for both the header and the data), the
 * accumulate family on int64 from every rank into one target (and doubles at an odd
 * displacement), fence, lock / lock_all with
 * flush, post/start/complete/wait, and the error codes: invalid window, target rank, op,
 * out-of-range accesses (RRT_ERR_RMA_RANGE, memory untouched) and synchronization errors.
 * Lists run it with each protocol forced and over TCP. */
#include "mp_util.h"

#define MAXB ((size_t)1 << 21)

static int right_, left_;

static uint64_t seed_of(int src, size_t size, int salt) {
  return mp_seed(src, 0, (int)size, (uint64_t)salt);
}

/* A window of bytes per rank of kind 0 create, 1 allocate, 2 dynamic; disp0[r] addresses rank
 * r's first byte (the address for dynamic windows, exchanged with an allgather). */
static rrt_win_t make_win(int kind, size_t bytes, unsigned char **mem, uint64_t *disp0) {
  rrt_win_t win = RRT_WIN_NULL;
  if (kind == 1) {
    MP_CALL(rrt_win_allocate(bytes, 1, RRT_COMM_WORLD, mem, &win));
  } else {
    *mem = mp_alloc(bytes);
    if (kind == 0) {
      MP_CALL(rrt_win_create(*mem, bytes, 1, RRT_COMM_WORLD, &win));
    } else {
      MP_CALL(rrt_win_create_dynamic(RRT_COMM_WORLD, &win));
      MP_CALL(rrt_win_attach(win, *mem, bytes));
    }
  }
  memset(*mem, 0, bytes);
  uint64_t mine = kind == 2 ? (uint64_t)(uintptr_t)*mem : 0;
  MP_CALL(rrt_allgather(&mine, 1, RRT_UINT64, disp0, 1, RRT_UINT64, RRT_COMM_WORLD));
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  return win;
}

static void free_win(int kind, rrt_win_t *win, unsigned char *mem) {
  if (kind == 2) MP_CALL(rrt_win_detach(*win, mem));
  MP_CALL(rrt_win_free(win));
  MP_EXPECT(*win == RRT_WIN_NULL, "rrt_win_free left the handle");
  if (kind != 1) free(mem);
}

static void test_put_get(int kind) {
  unsigned char *mem, *buf = mp_alloc(MAXB);
  uint64_t *d0 = malloc(sizeof(uint64_t) * (size_t)mp_size);
  rrt_win_t win = make_win(kind, MAXB, &mem, d0);
  size_t eager = mp_eager_limit();
  size_t cand[64];
  int n = 0;
  n = mp_add_around(cand, n, 224);
  n = mp_add_around(cand, n, eager);
  n = mp_add_around(cand, n, 65536);
  cand[n++] = MAXB;
  cand[n++] = 0;
  for (int k = 0; k < n; ++k) {
    size_t size = cand[k];
    if (size > MAXB) continue;
    /* fence epoch: put my pattern into my right neighbour */
    mp_fill(buf, size, seed_of(mp_rank, size, 1));
    MP_CALL(rrt_win_fence(0, win));
    MP_CALL(rrt_win_put(buf, size, RRT_BYTE, right_, d0[right_], win));
    MP_CALL(rrt_win_fence(0, win));
    MP_EXPECT_PATTERN(mem, size, seed_of(left_, size, 1), "kind %d fence put of %zu", kind, size);
    /* lock_all epoch: get it back, then rput / rget a second pattern (after everyone checked:
     * the left neighbour writes into this memory again) */
    MP_CALL(rrt_barrier(RRT_COMM_WORLD));
    MP_CALL(rrt_win_lock_all(0, win));
    memset(buf, 0, size);
    MP_CALL(rrt_win_get(buf, size, RRT_BYTE, right_, d0[right_], win));
    MP_CALL(rrt_win_flush(right_, win));
    MP_EXPECT_PATTERN(buf, size, seed_of(mp_rank, size, 1), "kind %d get of %zu", kind, size);
    mp_fill(buf, size, seed_of(mp_rank, size, 2));
    rrt_request_t rq;
    MP_CALL(rrt_win_rput(buf, size, RRT_BYTE, right_, d0[right_], win, &rq));
    MP_CALL(rrt_wait(&rq, RRT_STATUS_IGNORE));
    memset(buf, 0, size);
    MP_CALL(rrt_win_rget(buf, size, RRT_BYTE, right_, d0[right_], win, &rq));
    MP_CALL(rrt_wait(&rq, RRT_STATUS_IGNORE));
    MP_EXPECT_PATTERN(buf, size, seed_of(mp_rank, size, 2), "kind %d rget of %zu", kind, size);
    MP_CALL(rrt_win_unlock_all(win));
    MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  }
  free_win(kind, &win, mem);
  free(buf);
  free(d0);
}

static void test_atomics(void) {
  enum { N = 512, K = 20 };
  unsigned char *mem;
  uint64_t d0[256];
  if (mp_size > 256) return;
  rrt_win_t win = make_win(1, (N + 2 + (size_t)mp_size) * 8, &mem, d0);
  int64_t *w = (int64_t *)mem, v[N], got[K];
  for (int i = 0; i < N; ++i) v[i] = i + mp_rank;
  MP_CALL(rrt_win_lock(RRT_LOCK_EXCLUSIVE, 0, 0, win));
  MP_CALL(rrt_win_accumulate(v, N, RRT_INT64, 0, 0, RRT_SUM, win));
  MP_CALL(rrt_win_accumulate(v, 1, RRT_INT64, 0, 8 * N, RRT_MAX, win));
  MP_CALL(rrt_win_unlock(0, win));
  MP_CALL(rrt_win_lock(RRT_LOCK_SHARED, 0, 0, win));
  for (int i = 0; i < K; ++i) {
    int64_t one = 1;
    MP_CALL(rrt_win_fetch_and_op(&one, &got[i], RRT_INT64, 0, 8 * (N + 1), RRT_SUM, win));
  }
  MP_CALL(rrt_win_flush(0, win));
  for (int i = 1; i < K; ++i) MP_EXPECT(got[i] > got[i - 1], "tickets not increasing");
  int64_t cmp = 0, val = mp_rank + 1, old = -1;
  MP_CALL(rrt_win_compare_and_swap(&val, &cmp, &old, RRT_INT64, 0, 8 * (N + 2 + mp_rank), win));
  MP_CALL(rrt_win_flush(0, win));
  MP_EXPECT(old == 0, "cas returned %lld", (long long)old);
  MP_CALL(rrt_win_compare_and_swap(&val, &cmp, &old, RRT_INT64, 0, 8 * (N + 2 + mp_rank), win));
  MP_CALL(rrt_win_unlock(0, win));
  MP_EXPECT(old == mp_rank + 1, "failed cas returned %lld", (long long)old);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  MP_CALL(rrt_win_lock_all(0, win));
  int64_t rd = -1;
  MP_CALL(rrt_win_get_accumulate(NULL, &rd, 1, RRT_INT64, 0, 8 * (N + 1), RRT_NO_OP, win));
  MP_CALL(rrt_win_unlock_all(win));
  MP_EXPECT(rd == (int64_t)K * mp_size, "tickets total %lld", (long long)rd);
  if (mp_rank == 0) {
    for (int i = 0; i < N; ++i) {
      int64_t want = (int64_t)i * mp_size + (int64_t)mp_size * (mp_size - 1) / 2;
      MP_EXPECT(w[i] == want, "acc[%d] = %lld want %lld", i, (long long)w[i],
                (long long)want);
    }
    MP_EXPECT(w[N] == mp_size - 1, "max = %lld", (long long)w[N]);
    for (int r = 0; r < mp_size; ++r) MP_EXPECT(w[N + 2 + r] == r + 1, "cas slot %d", r);
  }
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  free_win(1, &win, mem);
}

/* Accumulate at an odd displacement of a disp_unit 1 window: the target reduces doubles that
 * are not 8-byte aligned (through aligned scratch), one short operation and one long enough
 * to be reduced in several chunks. */
static void test_misaligned(void) {
  enum { N = 700 };
  unsigned char *mem;
  uint64_t d0[256];
  if (mp_size > 256) return;
  const size_t bytes = 1 + (size_t)N * 8;
  rrt_win_t win = make_win(0, bytes, &mem, d0);
  double v[N];
  for (int i = 0; i < N; ++i) v[i] = 0.5 * i + mp_rank;
  MP_CALL(rrt_win_lock(RRT_LOCK_SHARED, 0, 0, win));
  MP_CALL(rrt_win_accumulate(v, N - 1, RRT_DOUBLE, 0, 1, RRT_SUM, win));
  MP_CALL(rrt_win_accumulate(&v[N - 1], 1, RRT_DOUBLE, 0, 1 + 8 * (N - 1), RRT_SUM, win));
  MP_CALL(rrt_win_unlock(0, win));
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  if (mp_rank == 0) {
    MP_EXPECT(mem[0] == 0, "byte before the doubles changed");
    for (int i = 0; i < N; ++i) {
      double got, want = (0.5 * i) * mp_size + (double)mp_size * (mp_size - 1) / 2;
      memcpy(&got, mem + 1 + 8 * (size_t)i, sizeof got);
      MP_EXPECT(got == want, "misaligned acc[%d] = %g want %g", i, got, want);
    }
  }
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  free_win(0, &win, mem);
}

static void test_pscw(void) {
  unsigned char *mem;
  uint64_t d0[256];
  if (mp_size > 256) return;
  rrt_win_t win = make_win(0, 4096, &mem, d0);
  for (int rep = 0; rep < 3; ++rep) {
    unsigned char b = (unsigned char)(mp_rank * 3 + rep + 1);
    MP_CALL(rrt_win_post(1, &left_, 0, win));
    MP_CALL(rrt_win_start(1, &right_, 0, win));
    MP_CALL(rrt_win_put(&b, 1, RRT_BYTE, right_, (size_t)rep, win));
    MP_CALL(rrt_win_complete(win));
    if (rep == 2) {
      int flag = 0;
      while (!flag) MP_CALL(rrt_win_test(win, &flag));
    } else {
      MP_CALL(rrt_win_wait(win));
    }
    MP_EXPECT(mem[rep] == (unsigned char)(left_ * 3 + rep + 1), "pscw rep %d", rep);
  }
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  free_win(0, &win, mem);
}

static void test_errors(void) {
  unsigned char *mem, b[64] = {0};
  uint64_t d0[256];
  if (mp_size > 256) return;
  rrt_win_t win = make_win(0, 16, &mem, d0);
  memset(mem, 0x5a, 16);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  rrt_win_t bad = 12345;
  MP_EXPECT_RC(RRT_ERR_WIN, rrt_win_put(b, 1, RRT_BYTE, 0, 0, bad));
  MP_EXPECT_RC(RRT_ERR_WIN, rrt_win_fence(0, bad));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_win_put(b, 1, RRT_BYTE, mp_size, 0, win));
  MP_EXPECT_RC(RRT_ERR_OP, rrt_win_accumulate(b, 1, RRT_INT32, right_, 0, RRT_NO_OP, win));
  MP_EXPECT_RC(RRT_ERR_OP, rrt_win_accumulate(b, 1, RRT_INT32, right_, 0, RRT_MINLOC, win));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_win_put(b, 1, 999, right_, 0, win));
  MP_EXPECT_RC(RRT_ERR_RMA_SYNC, rrt_win_unlock(right_, win));
  MP_EXPECT_RC(RRT_ERR_RMA_SYNC, rrt_win_complete(win));
  MP_EXPECT_RC(RRT_ERR_RMA_SYNC, rrt_win_attach(win, b, 8));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_win_lock(7, right_, 0, win));
  /* out of range: nothing written, reported by the completing call; small and rendezvous */
  MP_CALL(rrt_win_lock(RRT_LOCK_EXCLUSIVE, right_, 0, win));
  MP_CALL(rrt_win_put(b, 4, RRT_BYTE, right_, 14, win));
  MP_EXPECT_RC(RRT_ERR_RMA_RANGE, rrt_win_flush(right_, win));
  MP_CALL(rrt_win_get(b, 1, RRT_BYTE, right_, 16, win));
  MP_EXPECT_RC(RRT_ERR_RMA_RANGE, rrt_win_flush(right_, win));
  MP_CALL(rrt_win_accumulate(b, 2, RRT_INT64, right_, 8, RRT_SUM, win));
  MP_EXPECT_RC(RRT_ERR_RMA_RANGE, rrt_win_flush(right_, win));
  unsigned char *big = mp_alloc(MAXB);
  MP_CALL(rrt_win_put(big, MAXB, RRT_BYTE, right_, 0, win));
  MP_EXPECT_RC(RRT_ERR_RMA_RANGE, rrt_win_unlock(right_, win));
  rrt_request_t rq;
  MP_CALL(rrt_win_lock(RRT_LOCK_SHARED, right_, 0, win));
  MP_CALL(rrt_win_rget(big, MAXB, RRT_BYTE, right_, 0, win, &rq));
  MP_EXPECT_RC(RRT_ERR_RMA_RANGE, rrt_wait(&rq, RRT_STATUS_IGNORE));
  MP_CALL(rrt_win_put(b, 1, RRT_BYTE, right_, 15, win)); /* the last byte is in range */
  MP_CALL(rrt_win_unlock(right_, win));
  free(big);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  for (int i = 0; i < 15; ++i) MP_EXPECT(mem[i] == 0x5a, "byte %d written", i);
  MP_EXPECT(mem[15] == 0, "last byte %d", mem[15]);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  MP_CALL(rrt_win_lock(RRT_LOCK_SHARED, right_, 0, win));
  MP_EXPECT_RC(RRT_ERR_RMA_SYNC, rrt_win_free(&win)); /* still locked */
  MP_CALL(rrt_win_unlock(right_, win));
  free_win(0, &win, mem);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  right_ = (mp_rank + 1) % mp_size;
  left_ = (mp_rank + mp_size - 1) % mp_size;
  for (int kind = 0; kind < 3; ++kind) test_put_get(kind);
  test_atomics();
  test_misaligned();
  test_pscw();
  test_errors();
  return mp_finish("rma_win");
}
