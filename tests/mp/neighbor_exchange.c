/*
 * rrt_neighbor_alltoallv / rrt_ineighbor_alltoallv. Neighbourhoods given as lists:
 *   - a ring (right and left);
 *   - a 2-D grid, periodic (on small grids a rank is a neighbour twice) and not (RRT_PROC_NULL
 *     at the edges, whose receive slots must stay untouched);
 *   - a graph with duplicates and the rank itself, its sources in reverse rank order;
 *   - a star where only rank 0 has neighbours (the others call with empty NULL lists);
 * with block sizes that depend on the pair and include zero, gaps between blocks, and blocks in
 * reverse order in the receive buffer. Block b sent by rank s carries (s, b, element): a block
 * that lands in the wrong slot, from the wrong rank or out of order is caught.
 * Non-blocking: two exchanges and an allreduce outstanding at once. Errors: ranks out of range,
 * NULL lists, NULL request. Any number of ranks.
 */
#include "mp_util.h"

#define MAXN 16

typedef int (*list_fn)(int rank, int *out); /* a neighbour list of rank; returns its length */

static int grid_x, grid_y, grid_periodic;

static int ring_dests(int r, int *out) {
  out[0] = (r + 1) % mp_size;
  out[1] = (r + mp_size - 1) % mp_size;
  return 2;
}
static int ring_sources(int r, int *out) {
  out[0] = (r + mp_size - 1) % mp_size;
  out[1] = (r + 1) % mp_size;
  return 2;
}

/* MPI's Cartesian order: per dimension, the -1 then the +1 neighbour (sources = dests). */
static int grid_shift(int r, int dim, int delta) {
  int x = r % grid_x, y = r / grid_x;
  int n = dim == 0 ? grid_x : grid_y, *c = dim == 0 ? &x : &y;
  *c += delta;
  if (*c < 0 || *c >= n) {
    if (!grid_periodic) return RRT_PROC_NULL;
    *c = (*c + n) % n;
  }
  return y * grid_x + x;
}
static int grid_list(int r, int *out) {
  out[0] = grid_shift(r, 0, -1);
  out[1] = grid_shift(r, 0, +1);
  out[2] = grid_shift(r, 1, -1);
  out[3] = grid_shift(r, 1, +1);
  return 4;
}

/* To the right neighbour three times (in between, itself and rank 0). */
static int dup_dests(int r, int *out) {
  int right = (r + 1) % mp_size;
  out[0] = right;
  out[1] = r;
  out[2] = right;
  out[3] = 0;
  out[4] = right;
  return 5;
}
/* Every block sent to r, its senders in reverse rank order (each sender's blocks in order). */
static int dup_sources(int r, int *out) {
  int n = 0, d[MAXN];
  for (int s = mp_size - 1; s >= 0; --s) {
    int nd = dup_dests(s, d);
    for (int i = 0; i < nd; ++i)
      if (d[i] == r) out[n++] = s;
  }
  return n;
}

/* Rank 0 sends to everyone else; the others have no neighbours but their one source. */
static int star_dests(int r, int *out) {
  int n = 0;
  if (r == 0)
    for (int i = 1; i < mp_size; ++i) out[n++] = i;
  return n;
}
static int star_sources(int r, int *out) {
  if (r == 0) return 0;
  out[0] = 0;
  return 1;
}

/* Elements of block b of sender s (0 for some pairs). */
static size_t block_count(int s, int b) { return (size_t)((s * 7 + b * 3) % 4); }
static int32_t value(int s, int b, size_t j) { return (int32_t)(s * 100000 + b * 100 + (int)j); }

/* One exchange in flight: buffers and lists, checked once complete. */
struct exch {
  const char *what;
  list_fn dests_of, sources_of;
  int dests[MAXN], sources[MAXN], nd, ns;
  size_t scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN];
  int32_t *sbuf, *rbuf;
  size_t rlen;
};

static void exch_setup(struct exch *e, const char *what, list_fn dests_of, list_fn sources_of) {
  e->what = what;
  e->dests_of = dests_of;
  e->sources_of = sources_of;
  e->nd = dests_of(mp_rank, e->dests);
  e->ns = sources_of(mp_rank, e->sources);
  size_t off = 1; /* a gap before and between blocks */
  for (int b = 0; b < e->nd; ++b) {
    e->scounts[b] = block_count(mp_rank, b);
    e->sdispls[b] = off;
    off += e->scounts[b] + 1;
  }
  e->sbuf = (int32_t *)mp_alloc(off * sizeof(int32_t));
  for (size_t i = 0; i < off; ++i) e->sbuf[i] = -2;
  for (int b = 0; b < e->nd; ++b)
    for (size_t j = 0; j < e->scounts[b]; ++j) e->sbuf[e->sdispls[b] + j] = value(mp_rank, b, j);
  /* Receive slots: the count the sender uses for that block (its k-th to us from that source),
   * laid out last slot first. */
  off = 1;
  for (int i = e->ns - 1; i >= 0; --i) {
    e->rcounts[i] = 0;
    if (e->sources[i] == RRT_PROC_NULL) {
      e->rcounts[i] = 2; /* never written */
    } else {
      int k = 0, d[MAXN];
      for (int j = 0; j < i; ++j) k += e->sources[j] == e->sources[i];
      int nd = e->dests_of(e->sources[i], d);
      for (int b = 0; b < nd; ++b)
        if (d[b] == mp_rank && k-- == 0) e->rcounts[i] = block_count(e->sources[i], b);
    }
    e->rdispls[i] = off;
    off += e->rcounts[i] + 1;
  }
  e->rlen = off;
  e->rbuf = (int32_t *)mp_alloc(off * sizeof(int32_t));
  for (size_t i = 0; i < off; ++i) e->rbuf[i] = -1;
}

static void exch_check(struct exch *e) {
  char *hit = calloc(e->rlen, 1);
  for (int i = 0; i < e->ns; ++i) {
    int s = e->sources[i];
    for (size_t j = 0; j < e->rcounts[i]; ++j) hit[e->rdispls[i] + j] = 1;
    if (s == RRT_PROC_NULL) {
      for (size_t j = 0; j < e->rcounts[i]; ++j)
        MP_EXPECT(e->rbuf[e->rdispls[i] + j] == -1, "%s: PROC_NULL slot %d written", e->what, i);
      continue;
    }
    int k = 0, d[MAXN], blk = -1;
    for (int j = 0; j < i; ++j) k += e->sources[j] == s;
    int nd = e->dests_of(s, d);
    for (int b = 0; b < nd && blk < 0; ++b)
      if (d[b] == mp_rank && k-- == 0) blk = b;
    for (size_t j = 0; j < e->rcounts[i]; ++j) {
      int32_t got = e->rbuf[e->rdispls[i] + j], want = value(s, blk, j);
      MP_EXPECT(got == want, "%s: slot %d (from %d) element %zu: %d, want %d", e->what, i, s, j,
                (int)got, (int)want);
    }
  }
  for (size_t j = 0; j < e->rlen; ++j)
    if (!hit[j]) MP_EXPECT(e->rbuf[j] == -1, "%s: gap element %zu written", e->what, j);
  free(hit);
  free(e->sbuf);
  free(e->rbuf);
}

static int exch_post(struct exch *e, rrt_request_t *req) {
  const int *src = e->ns ? e->sources : NULL, *dst = e->nd ? e->dests : NULL;
  if (req)
    return rrt_ineighbor_alltoallv(e->sbuf, e->scounts, e->sdispls, e->rbuf, e->rcounts,
                                   e->rdispls, RRT_INT32, (size_t)e->ns, src, (size_t)e->nd, dst,
                                   RRT_COMM_WORLD, req);
  return rrt_neighbor_alltoallv(e->sbuf, e->scounts, e->sdispls, e->rbuf, e->rcounts, e->rdispls,
                                RRT_INT32, (size_t)e->ns, src, (size_t)e->nd, dst, RRT_COMM_WORLD);
}

static void run_blocking(const char *what, list_fn dests_of, list_fn sources_of) {
  struct exch e;
  exch_setup(&e, what, dests_of, sources_of);
  MP_CALL(exch_post(&e, NULL));
  exch_check(&e);
}

static void test_nonblocking(void) {
  struct exch a, b;
  rrt_request_t reqs[3];
  int32_t in = mp_rank + 1, sum = 0;
  exch_setup(&a, "nonblocking ring", ring_dests, ring_sources);
  exch_setup(&b, "nonblocking duplicates", dup_dests, dup_sources);
  MP_CALL(exch_post(&a, &reqs[0]));
  MP_CALL(rrt_iallreduce(&in, &sum, 1, RRT_INT32, RRT_SUM, RRT_COMM_WORLD, &reqs[1]));
  MP_CALL(exch_post(&b, &reqs[2]));
  MP_CALL(rrt_waitall(3, reqs, NULL));
  MP_EXPECT(sum == mp_size * (mp_size + 1) / 2, "allreduce between exchanges: %d", (int)sum);
  exch_check(&a);
  exch_check(&b);
}

static void test_errors(void) {
  int32_t buf[4] = {0};
  size_t one = 1, zero = 0;
  int bad = mp_size, neg = -5, ok = 0;
  rrt_request_t req;
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_neighbor_alltoallv(buf, &one, &zero, buf + 2, &one, &zero,
                                                    RRT_INT32, 1, &bad, 0, NULL, RRT_COMM_WORLD));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_neighbor_alltoallv(buf, &one, &zero, buf + 2, &one, &zero,
                                                    RRT_INT32, 0, NULL, 1, &neg, RRT_COMM_WORLD));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_neighbor_alltoallv(buf, &one, &zero, buf + 2, &one, &zero,
                                                   RRT_INT32, 1, NULL, 0, NULL, RRT_COMM_WORLD));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_neighbor_alltoallv(buf, NULL, &zero, buf + 2, &one, &zero,
                                                   RRT_INT32, 0, NULL, 1, &ok, RRT_COMM_WORLD));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_ineighbor_alltoallv(NULL, NULL, NULL, NULL, NULL, NULL, RRT_INT32,
                                                    0, NULL, 0, NULL, RRT_COMM_WORLD, NULL));
  MP_EXPECT_RC(RRT_ERR_BUFFER, rrt_neighbor_alltoallv(NULL, &one, &zero, buf + 2, &one, &zero,
                                                      RRT_INT32, 0, NULL, 1, &ok, RRT_COMM_WORLD));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_ineighbor_alltoallv(NULL, NULL, NULL, NULL, NULL, NULL, RRT_INT32,
                                                     0, NULL, 0, NULL, RRT_COMM_NULL, &req));
  /* After the failed calls every rank is still in step: a real exchange works. */
  run_blocking("ring after errors", ring_dests, ring_sources);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  run_blocking("ring", ring_dests, ring_sources);
  grid_x = mp_size % 2 == 0 ? 2 : mp_size;
  grid_y = mp_size / grid_x;
  grid_periodic = 1;
  run_blocking("periodic grid", grid_list, grid_list);
  grid_periodic = 0;
  run_blocking("grid", grid_list, grid_list);
  run_blocking("duplicates", dup_dests, dup_sources);
  run_blocking("star", star_dests, star_sources);
  test_nonblocking();
  test_errors();
  return mp_finish("neighbor_exchange");
}
