/* Multi-process check of every collective against a serial reference computed locally (every
 * rank can generate every other rank's input). The algorithms are forced from the environment
 * (RRT_COLL_<NAME>=...) by the test list; this program runs all collectives on COMM_WORLD and on
 * a split communicator, for counts 0, 1, 1021 and (--big) a few MiB, with several ops and
 * types, in place and not, blocking and with several non-blocking collectives outstanding.
 * --alloc=all|even: the reductions' buffers and the allgather(v) outputs from rrt_alloc_mem (on
 * even ranks only: mixed).
 *
 * Floating-point tolerance: a sum of p doubles |x| <= 1 in any order of p-1 additions errs by at
 * most gamma_{p-1} sum|x| ~ (p-1) eps p (Higham 4.2); checked with a 1.01 margin.
 * Prints "PASS coll_check" on rank 0 when every check passed, "FAIL ..." lines otherwise. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rrt/rrt.h>

static int g_rank, g_failures;
static size_t g_big;

#define FAIL(...)                                           \
  do {                                                      \
    if (g_failures++ < 20) {                                \
      printf("FAIL rank %d: ", g_rank);                     \
      printf(__VA_ARGS__);                                  \
      printf("\n");                                         \
      fflush(stdout);                                       \
    }                                                       \
  } while (0)
#define OK(call)                                                             \
  do {                                                                       \
    int rc_ = (call);                                                        \
    if (rc_ != RRT_SUCCESS) FAIL("%s -> %s (line %d)", #call, rrt_strerror(rc_), __LINE__); \
  } while (0)

static void* xmalloc(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) {
    printf("FAIL out of memory\n");
    exit(1);
  }
  return p;
}

/* --alloc=all|even: the reductions' input and output buffers and the allgather(v)s' outputs from
 * rrt_alloc_mem on every rank or on even world ranks only (peers read them where they lie; mixed
 * with private ones). */
static int g_alloc_shared;

static void* rmalloc(size_t n) {
  if (!g_alloc_shared) return xmalloc(n);
  void* p = NULL;
  if (rrt_alloc_mem(n ? n : 1, &p) != RRT_SUCCESS || !p) {
    printf("FAIL rrt_alloc_mem(%zu)\n", n);
    exit(1);
  }
  return p;
}

static void rfree(void* p) {
  if (!g_alloc_shared) {
    free(p);
  } else if (rrt_free_mem(p) != RRT_SUCCESS) {
    printf("FAIL rrt_free_mem\n");
    exit(1);
  }
}

/* ---- inputs ------------------------------------------------------------------------------ */
enum Cfg { INT_SUM, DOUBLE_SUM, AFFINE, NCFG };
static rrt_datatype_t g_pair;
static rrt_op_t g_affine;

/* x op y = apply x, then y, for affine maps (a, b) mod 2^32: associative, not commutative. */
static void affine(const void* in, void* inout, size_t count, rrt_datatype_t t, void* ud) {
  const uint32_t* x = in;
  uint32_t* y = inout;
  (void)t;
  (void)ud;
  for (size_t i = 0; i < count; ++i) {
    uint32_t a = x[2 * i] * y[2 * i], b = x[2 * i + 1] * y[2 * i] + y[2 * i + 1];
    y[2 * i] = a;
    y[2 * i + 1] = b;
  }
}

static size_t esize(int cfg) { return cfg == INT_SUM ? 4 : 8; }
static rrt_datatype_t etype(int cfg) { return cfg == INT_SUM ? RRT_INT32 : cfg == DOUBLE_SUM ? RRT_DOUBLE : g_pair; }
static rrt_op_t eop(int cfg) { return cfg == AFFINE ? g_affine : RRT_SUM; }

static void gen(int cfg, int r, size_t i, void* e) {
  if (cfg == INT_SUM) {
    int32_t v = (int32_t)((r + 1) * 1000 + (int)(i % 100000));
    memcpy(e, &v, 4);
  } else if (cfg == DOUBLE_SUM) {
    double v = sin((double)(r * 131 + (long)i));
    memcpy(e, &v, 8);
  } else {
    uint32_t v[2] = {(uint32_t)(2 * (r + i) + 1), (uint32_t)(r * 31 + i)};
    memcpy(e, v, 8);
  }
}
static void fill(int cfg, int r, size_t n, char* b) {
  for (size_t i = 0; i < n; ++i) gen(cfg, r, i, b + i * esize(cfg));
}
/* acc = acc op x (acc from lower ranks). */
static void combine(int cfg, char* acc, const char* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    char* a = acc + i * esize(cfg);
    const char* b = x + i * esize(cfg);
    if (cfg == INT_SUM) {
      uint32_t u, v;
      memcpy(&u, a, 4);
      memcpy(&v, b, 4);
      u += v;
      memcpy(a, &u, 4);
    } else if (cfg == DOUBLE_SUM) {
      double u, v;
      memcpy(&u, a, 8);
      memcpy(&v, b, 8);
      u += v;
      memcpy(a, &u, 8);
    } else {
      char t[8];
      memcpy(t, b, 8);
      affine(a, t, 1, 0, NULL);
      memcpy(a, t, 8);
    }
  }
}
/* Reference over the ranks of comm [first, end): world ranks are what gen() uses. */
static void reference(int cfg, const int* wr, int first, int end, size_t n, char* out) {
  char* x = xmalloc(n * esize(cfg));
  fill(cfg, wr[first], n, out);
  for (int r = first + 1; r < end; ++r) {
    fill(cfg, wr[r], n, x);
    combine(cfg, out, x, n);
  }
  free(x);
}
static void expect(int cfg, const char* got, const char* want, size_t n, int p, const char* what) {
  if (cfg != DOUBLE_SUM) {
    if (memcmp(got, want, n * esize(cfg)) != 0) FAIL("%s: result differs (n=%zu)", what, n);
    return;
  }
  double bound = (p - 1) * 2.220446049250313e-16 * p * 1.01;
  for (size_t i = 0; i < n; ++i) {
    double g, w;
    memcpy(&g, got + 8 * i, 8);
    memcpy(&w, want + 8 * i, 8);
    if (fabs(g - w) > bound) {
      FAIL("%s: element %zu %.17g vs %.17g", what, i, g, w);
      return;
    }
  }
}

static char pat(int from, int to, size_t i) { return (char)(from * 37 + to * 11 + (int)i * 3 + 1); }

/* ---- the collectives -------------------------------------------------------------------- */
typedef struct {
  rrt_comm_t comm;
  int rank, size;
  int wr[64]; /* world rank of each rank */
  const char* name;
} Ctx;

static void t_reductions(Ctx* c, size_t n) {
  char what[96];
  for (int cfg = 0; cfg < NCFG; ++cfg) {
    const size_t es = esize(cfg), bytes = n * es;
    char* in = rmalloc(bytes);
    char* out = rmalloc(bytes);
    char* want = xmalloc(bytes);
    fill(cfg, c->wr[c->rank], n, in);
    for (int inplace = 0; inplace < 2; ++inplace) {
      /* allreduce */
      if (inplace) memcpy(out, in, bytes);
      OK(rrt_allreduce(inplace ? RRT_IN_PLACE : in, out, n, etype(cfg), eop(cfg), c->comm));
      reference(cfg, c->wr, 0, c->size, n, want);
      snprintf(what, sizeof what, "%s allreduce cfg %d inplace %d", c->name, cfg, inplace);
      expect(cfg, out, want, n, c->size, what);
      /* reduce at a root */
      const int root = (int)((n + 1) % (size_t)c->size);
      if (inplace && c->rank == root) memcpy(out, in, bytes);
      OK(rrt_reduce(inplace && c->rank == root ? RRT_IN_PLACE : in, out, n, etype(cfg), eop(cfg), root,
                    c->comm));
      snprintf(what, sizeof what, "%s reduce cfg %d inplace %d root %d", c->name, cfg, inplace, root);
      if (c->rank == root) expect(cfg, out, want, n, c->size, what);
      /* scan / exscan */
      if (inplace) memcpy(out, in, bytes);
      OK(rrt_scan(inplace ? RRT_IN_PLACE : in, out, n, etype(cfg), eop(cfg), c->comm));
      reference(cfg, c->wr, 0, c->rank + 1, n, want);
      snprintf(what, sizeof what, "%s scan cfg %d inplace %d", c->name, cfg, inplace);
      expect(cfg, out, want, n, c->rank + 1, what);
      if (inplace) memcpy(out, in, bytes);
      OK(rrt_exscan(inplace ? RRT_IN_PLACE : in, out, n, etype(cfg), eop(cfg), c->comm));
      if (c->rank > 0) {
        reference(cfg, c->wr, 0, c->rank, n, want);
        snprintf(what, sizeof what, "%s exscan cfg %d inplace %d", c->name, cfg, inplace);
        expect(cfg, out, want, n, c->rank, what);
      }
    }
    /* reduce_scatter_block and reduce_scatter (uneven counts) */
    const size_t p = (size_t)c->size;
    size_t* counts = xmalloc(p * sizeof(size_t));
    size_t total = 0;
    for (size_t r = 0; r < p; ++r) total += counts[r] = (r % 3 == 1) ? 0 : n / p + r;
    for (int block = 0; block < 2; ++block) {
      size_t tot = block ? (n / p) * p : total, mine = block ? n / p : counts[c->rank], off = 0;
      if (!block)
        for (int r = 0; r < c->rank; ++r) off += counts[r];
      else
        off = mine * (size_t)c->rank;
      char* rin = rmalloc(tot * es);
      char* rout = rmalloc(tot * es);
      char* rwant = xmalloc(tot * es);
      fill(cfg, c->wr[c->rank], tot, rin);
      reference(cfg, c->wr, 0, c->size, tot, rwant);
      for (int inplace = 0; inplace < 2; ++inplace) {
        if (inplace) memcpy(rout, rin, tot * es);
        if (block)
          OK(rrt_reduce_scatter_block(inplace ? RRT_IN_PLACE : rin, rout, mine, etype(cfg), eop(cfg), c->comm));
        else
          OK(rrt_reduce_scatter(inplace ? RRT_IN_PLACE : rin, rout, counts, etype(cfg), eop(cfg), c->comm));
        snprintf(what, sizeof what, "%s reduce_scatter%s cfg %d inplace %d", c->name, block ? "_block" : "", cfg, inplace);
        expect(cfg, rout, rwant + off * es, mine, c->size, what);
      }
      rfree(rin);
      rfree(rout);
      free(rwant);
    }
    free(counts);
    rfree(in);
    rfree(out);
    free(want);
  }
}

static void t_data(Ctx* c, size_t n) {
  const int p = c->size, me = c->rank;
  const size_t up = (size_t)p;
  char what[96];
  /* bcast from each of two roots */
  char* b = xmalloc(n * 4);
  for (int k = 0; k < 2; ++k) {
    const int root = k ? p - 1 : 0;
    for (size_t i = 0; i < n * 4; ++i) b[i] = me == root ? pat(root, 0, i) : 0;
    OK(rrt_bcast(b, n, RRT_INT32, root, c->comm));
    for (size_t i = 0; i < n * 4; ++i)
      if (b[i] != pat(root, 0, i)) {
        FAIL("%s bcast root %d n %zu byte %zu", c->name, root, n, i);
        break;
      }
  }
  free(b);
  /* allgather, in place and not */
  char* s = xmalloc(n);
  char* r = rmalloc(n * up);
  for (size_t i = 0; i < n; ++i) s[i] = pat(me, 0, i);
  for (int inplace = 0; inplace < 2; ++inplace) {
    memset(r, 0, n * up);
    if (inplace) memcpy(r + (size_t)me * n, s, n);
    OK(rrt_allgather(inplace ? RRT_IN_PLACE : s, n, RRT_BYTE, r, n, RRT_BYTE, c->comm));
    for (int q = 0; q < p; ++q)
      for (size_t i = 0; i < n; ++i)
        if (r[(size_t)q * n + i] != pat(q, 0, i)) {
          FAIL("%s allgather inplace %d n %zu from %d", c->name, inplace, n, q);
          q = p;
          break;
        }
  }
  /* gather / scatter at a root, then with the root's own block in place (RRT_IN_PLACE) */
  const int root = (int)(n % up);
  for (int inplace = 0; inplace < 2; ++inplace) {
    const int here = inplace && me == root;
    for (size_t i = 0; i < n; ++i) s[i] = pat(me, 0, i);
    memset(r, 0, n * up);
    if (here) memcpy(r + (size_t)root * n, s, n);
    OK(rrt_gather(here ? RRT_IN_PLACE : s, n, RRT_BYTE, r, n, RRT_BYTE, root, c->comm));
    if (me == root)
      for (int q = 0; q < p; ++q)
        for (size_t i = 0; i < n; ++i)
          if (r[(size_t)q * n + i] != pat(q, 0, i)) {
            FAIL("%s gather inplace %d n %zu from %d", c->name, inplace, n, q);
            q = p;
            break;
          }
    if (me == root)
      for (int q = 0; q < p; ++q)
        for (size_t i = 0; i < n; ++i) r[(size_t)q * n + i] = pat(root, q, i);
    memset(s, 0, n);
    OK(rrt_scatter(r, n, RRT_BYTE, here ? RRT_IN_PLACE : s, n, RRT_BYTE, root, c->comm));
    const char* got = here ? r + (size_t)root * n : s;
    for (size_t i = 0; i < n; ++i)
      if (got[i] != pat(root, me, i)) {
        FAIL("%s scatter inplace %d n %zu", c->name, inplace, n);
        break;
      }
  }
  free(s);
  rfree(r);
  /* alltoall (in place and not) and alltoallv */
  char* a = xmalloc(n * up);
  char* z = xmalloc(n * up);
  for (int inplace = 0; inplace < 2; ++inplace) {
    for (int q = 0; q < p; ++q)
      for (size_t i = 0; i < n; ++i) a[(size_t)q * n + i] = pat(me, q, i);
    if (inplace) memcpy(z, a, n * up);
    OK(rrt_alltoall(inplace ? RRT_IN_PLACE : a, n, RRT_BYTE, z, n, RRT_BYTE, c->comm));
    for (int q = 0; q < p; ++q)
      for (size_t i = 0; i < n; ++i)
        if (z[(size_t)q * n + i] != pat(q, me, i)) {
          FAIL("%s alltoall inplace %d n %zu from %d", c->name, inplace, n, q);
          q = p;
          break;
        }
  }
  free(a);
  free(z);
  /* v-variants: rank q contributes (q % 3 == 1 ? 0 : n/2 + q) bytes, laid out in reverse with gaps */
  size_t *cnt = xmalloc(up * sizeof(size_t)), *dsp = xmalloc(up * sizeof(size_t));
  size_t ext = 0;
  for (int q = p - 1; q >= 0; --q) {
    cnt[q] = q % 3 == 1 ? 0 : n / 2 + (size_t)q;
    dsp[q] = ext;
    ext += cnt[q] + 1;
  }
  char* vs = xmalloc(cnt[me]);
  char* vr = rmalloc(ext);
  for (size_t i = 0; i < cnt[me]; ++i) vs[i] = pat(me, 1, i);
  memset(vr, 0, ext);
  OK(rrt_allgatherv(vs, cnt[me], RRT_BYTE, vr, cnt, dsp, RRT_BYTE, c->comm));
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < cnt[q]; ++i)
      if (vr[dsp[q] + i] != pat(q, 1, i)) {
        FAIL("%s allgatherv n %zu from %d", c->name, n, q);
        q = p;
        break;
      }
  memset(vr, 0, ext); /* in place: the own block already at its displacement */
  memcpy(vr + dsp[me], vs, cnt[me]);
  OK(rrt_allgatherv(RRT_IN_PLACE, 0, RRT_BYTE, vr, cnt, dsp, RRT_BYTE, c->comm));
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < cnt[q]; ++i)
      if (vr[dsp[q] + i] != pat(q, 1, i)) {
        FAIL("%s allgatherv in place n %zu from %d", c->name, n, q);
        q = p;
        break;
      }
  memset(vr, 0, ext);
  OK(rrt_gatherv(vs, cnt[me], RRT_BYTE, vr, cnt, dsp, RRT_BYTE, root, c->comm));
  if (me == root)
    for (int q = 0; q < p; ++q)
      for (size_t i = 0; i < cnt[q]; ++i)
        if (vr[dsp[q] + i] != pat(q, 1, i)) {
          FAIL("%s gatherv n %zu from %d", c->name, n, q);
          q = p;
          break;
        }
  memset(vs, 0, cnt[me]);
  OK(rrt_scatterv(vr, cnt, dsp, RRT_BYTE, vs, cnt[me], RRT_BYTE, root, c->comm));
  for (size_t i = 0; i < cnt[me]; ++i)
    if (vs[i] != pat(me, 1, i)) {
      FAIL("%s scatterv n %zu", c->name, n);
      break;
    }
  /* alltoallv: me -> q sends (me + q) % 4 == 3 ? 0 : n/4 + me bytes */
  size_t *sc = xmalloc(up * sizeof(size_t)), *sd = xmalloc(up * sizeof(size_t));
  size_t *rc = xmalloc(up * sizeof(size_t)), *rd = xmalloc(up * sizeof(size_t));
  size_t se = 0, re = 0;
  for (int q = 0; q < p; ++q) {
    sc[q] = (me + q) % 4 == 3 ? 0 : n / 4 + (size_t)me;
    sd[q] = se;
    se += sc[q] + 2;
  }
  for (int q = p - 1; q >= 0; --q) {
    rc[q] = (me + q) % 4 == 3 ? 0 : n / 4 + (size_t)q;
    rd[q] = re;
    re += rc[q] + 3;
  }
  char* as = xmalloc(se);
  char* ar = xmalloc(re);
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < sc[q]; ++i) as[sd[q] + i] = pat(me, q, i);
  OK(rrt_alltoallv(as, sc, sd, RRT_BYTE, ar, rc, rd, RRT_BYTE, c->comm));
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < rc[q]; ++i)
      if (ar[rd[q] + i] != pat(q, me, i)) {
        FAIL("%s alltoallv n %zu from %d", c->name, n, q);
        q = p;
        break;
      }
  /* in place: gatherv and scatterv at the root, alltoallv with symmetric counts (me <-> q:
     n/4 + me + q bytes, none when (me + q) % 4 == 3) in the receive layout */
  memset(vr, 0, ext);
  if (me == root)
    for (size_t i = 0; i < cnt[me]; ++i) vr[dsp[me] + i] = pat(me, 1, i);
  OK(rrt_gatherv(me == root ? RRT_IN_PLACE : vs, cnt[me], RRT_BYTE, vr, cnt, dsp, RRT_BYTE, root,
                 c->comm));
  if (me == root)
    for (int q = 0; q < p; ++q)
      for (size_t i = 0; i < cnt[q]; ++i)
        if (vr[dsp[q] + i] != pat(q, 1, i)) {
          FAIL("%s gatherv in place n %zu from %d", c->name, n, q);
          q = p;
          break;
        }
  memset(vs, 0, cnt[me]);
  OK(rrt_scatterv(vr, cnt, dsp, RRT_BYTE, me == root ? RRT_IN_PLACE : vs, cnt[me], RRT_BYTE, root,
                  c->comm));
  if (me != root)
    for (size_t i = 0; i < cnt[me]; ++i)
      if (vs[i] != pat(me, 1, i)) {
        FAIL("%s scatterv in place n %zu", c->name, n);
        break;
      }
  re = 0;
  for (int q = p - 1; q >= 0; --q) {
    rc[q] = (me + q) % 4 == 3 ? 0 : n / 4 + (size_t)(me + q);
    rd[q] = re;
    re += rc[q] + 3;
  }
  free(ar);
  ar = xmalloc(re);
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < rc[q]; ++i) ar[rd[q] + i] = pat(me, q, i);
  OK(rrt_alltoallv(RRT_IN_PLACE, NULL, NULL, RRT_BYTE, ar, rc, rd, RRT_BYTE, c->comm));
  for (int q = 0; q < p; ++q)
    for (size_t i = 0; i < rc[q]; ++i)
      if (ar[rd[q] + i] != pat(q, me, i)) {
        FAIL("%s alltoallv in place n %zu from %d", c->name, n, q);
        q = p;
        break;
      }
  free(as);
  free(ar);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(cnt);
  free(dsp);
  free(vs);
  rfree(vr);
  (void)what;
}

/* Several non-blocking collectives outstanding at once, completed by one waitall. */
static void t_outstanding(Ctx* c) {
  enum { K = 4 };
  const size_t n = 1021;
  int32_t* in = xmalloc(n * 4);
  int32_t* out[K];
  int32_t* want = xmalloc(n * 4);
  rrt_request_t req[K + 2];
  fill(INT_SUM, c->wr[c->rank], n, (char*)in);
  reference(INT_SUM, c->wr, 0, c->size, n, (char*)want);
  for (int k = 0; k < K; ++k) {
    out[k] = xmalloc(n * 4);
    OK(rrt_iallreduce(in, out[k], n, RRT_INT32, RRT_SUM, c->comm, &req[k]));
  }
  char* bb = xmalloc(4096);
  for (int i = 0; i < 4096; ++i) bb[i] = c->rank == 0 ? pat(0, 9, (size_t)i) : 0;
  OK(rrt_ibcast(bb, 4096, RRT_BYTE, 0, c->comm, &req[K]));
  OK(rrt_ibarrier(c->comm, &req[K + 1]));
  OK(rrt_waitall(K + 2, req, RRT_STATUSES_IGNORE));
  for (int k = 0; k < K; ++k) {
    if (memcmp(out[k], want, n * 4)) FAIL("%s iallreduce %d differs", c->name, k);
    free(out[k]);
  }
  for (int i = 0; i < 4096; ++i)
    if (bb[i] != pat(0, 9, (size_t)i)) {
      FAIL("%s ibcast differs", c->name);
      break;
    }
  free(bb);
  free(in);
  free(want);
}

/* Collectives that move no byte (every count 0) do not wait for the other ranks, as in Open MPI
 * and MPICH: the last rank starts them only after a message that rank 0 sends once it finished
 * them, which deadlocks if they synchronise. A real allreduce then shows the collective sequence
 * still in step. */
static void t_empty(Ctx* c) {
  if (c->size < 2) return;
  const int last = c->size - 1;
  int32_t a[4] = {0}, b[4] = {0};
  size_t zero[64] = {0}, dsp[64] = {0};
  int32_t token = 7, one = 1, sum = 0;
  if (c->rank == last) OK(rrt_recv(&token, 1, RRT_INT32, 0, 77, c->comm, RRT_STATUS_IGNORE));
  OK(rrt_bcast(a, 0, RRT_INT32, 0, c->comm));
  OK(rrt_reduce(a, b, 0, RRT_INT32, RRT_SUM, 0, c->comm));
  OK(rrt_allreduce(a, b, 0, RRT_INT32, RRT_SUM, c->comm));
  OK(rrt_scan(a, b, 0, RRT_INT32, RRT_SUM, c->comm));
  OK(rrt_exscan(a, b, 0, RRT_INT32, RRT_SUM, c->comm));
  OK(rrt_allgather(a, 0, RRT_INT32, b, 0, RRT_INT32, c->comm));
  OK(rrt_alltoall(a, 0, RRT_INT32, b, 0, RRT_INT32, c->comm));
  OK(rrt_gather(a, 0, RRT_INT32, b, 0, RRT_INT32, 0, c->comm));
  OK(rrt_scatter(a, 0, RRT_INT32, b, 0, RRT_INT32, 0, c->comm));
  OK(rrt_allgatherv(a, 0, RRT_INT32, b, zero, dsp, RRT_INT32, c->comm));
  OK(rrt_reduce_scatter(a, b, zero, RRT_INT32, RRT_SUM, c->comm));
  OK(rrt_reduce_scatter_block(a, b, 0, RRT_INT32, RRT_SUM, c->comm));
  if (c->rank == 0) OK(rrt_send(&token, 1, RRT_INT32, last, 77, c->comm));
  OK(rrt_allreduce(&one, &sum, 1, RRT_INT32, RRT_SUM, c->comm));
  if (sum != c->size || token != 7)
    FAIL("%s after empty collectives: sum %d token %d", c->name, (int)sum, (int)token);
}

#define EXPECT_RC(want, call)                                                          \
  do {                                                                                 \
    int rc_ = (call);                                                                  \
    if (rc_ != (want))                                                                 \
      FAIL("%s -> %s, expected %s (line %d)", #call, rrt_strerror(rc_), rrt_strerror(want), \
           __LINE__);                                                                  \
  } while (0)

/* Bad arguments come back as errors, on the ranks that can see them, and a failed call takes no
 * collective sequence number: collectives after it still match across the ranks. */
static void t_errors(Ctx* c) {
  const int root = 0, me = c->rank, n = c->size;
  int32_t in[4] = {1, 2, 3, 4}, out[4 * 64];
  size_t cnt[64], dsp[64];
  for (int r = 0; r < n; ++r) cnt[r] = 1, dsp[r] = (size_t)r;
  rrt_request_t req;
  /* Seen by every rank. */
  EXPECT_RC(RRT_ERR_ROOT, rrt_bcast(in, 1, RRT_INT32, n, c->comm));
  EXPECT_RC(RRT_ERR_ROOT, rrt_gather(in, 1, RRT_INT32, out, 1, RRT_INT32, -1, c->comm));
  EXPECT_RC(RRT_ERR_ROOT, rrt_iscatter(in, 1, RRT_INT32, out, 1, RRT_INT32, n, c->comm, &req));
  EXPECT_RC(RRT_ERR_TYPE, rrt_allreduce(in, out, 1, (rrt_datatype_t)9999, RRT_SUM, c->comm));
  EXPECT_RC(RRT_ERR_OP, rrt_allreduce(in, out, 1, RRT_INT32, (rrt_op_t)9999, c->comm));
  EXPECT_RC(RRT_ERR_COMM, rrt_barrier((rrt_comm_t)12345));
  EXPECT_RC(RRT_ERR_BUFFER, rrt_allgather(NULL, 1, RRT_INT32, out, 1, RRT_INT32, c->comm));
  /* Seen only by the root (counts and the whole buffer matter there) or only by the others. */
  if (me == root) {
    EXPECT_RC(RRT_ERR_ARG, rrt_gatherv(in, 1, RRT_INT32, out, NULL, dsp, RRT_INT32, root, c->comm));
    EXPECT_RC(RRT_ERR_ARG, rrt_scatterv(in, cnt, NULL, RRT_INT32, out, 1, RRT_INT32, root, c->comm));
    EXPECT_RC(RRT_ERR_COUNT, rrt_gather(in, 2, RRT_INT32, out, 1, RRT_INT32, root, c->comm));
    EXPECT_RC(RRT_ERR_COUNT, rrt_scatter(in, 1, RRT_INT32, out, 3, RRT_INT32, root, c->comm));
    EXPECT_RC(RRT_ERR_BUFFER, rrt_gather(in, 1, RRT_INT32, NULL, 1, RRT_INT32, root, c->comm));
    EXPECT_RC(RRT_ERR_BUFFER,
              rrt_scatterv(NULL, cnt, dsp, RRT_INT32, out, 1, RRT_INT32, root, c->comm));
  } else {
    EXPECT_RC(RRT_ERR_BUFFER,
              rrt_gather(RRT_IN_PLACE, 1, RRT_INT32, out, 1, RRT_INT32, root, c->comm));
    EXPECT_RC(RRT_ERR_BUFFER,
              rrt_scatter(in, 1, RRT_INT32, RRT_IN_PLACE, 1, RRT_INT32, root, c->comm));
  }
  /* Still in step: a gather and a scatter that every rank makes. */
  int32_t mine = 100 + me, back = -1;
  OK(rrt_gather(&mine, 1, RRT_INT32, out, 1, RRT_INT32, root, c->comm));
  if (me == root)
    for (int r = 0; r < n; ++r)
      if (out[r] != 100 + r) FAIL("%s gather after errors: [%d] = %d", c->name, r, (int)out[r]);
  OK(rrt_scatter(out, 1, RRT_INT32, &back, 1, RRT_INT32, root, c->comm));
  if (back != 100 + me) FAIL("%s scatter after errors: %d", c->name, (int)back);
}

/* rrt_reduce_local: inout = in op inout, in this process, checked against the same reference
 * (in holds the lower rank's data), and its argument errors. */
static void t_reduce_local(void) {
  const size_t n = 1021;
  const int wr[2] = {g_rank, g_rank + 1};
  for (int cfg = 0; cfg < NCFG; ++cfg) {
    char* in = xmalloc(n * esize(cfg));
    char* inout = xmalloc(n * esize(cfg));
    char* want = xmalloc(n * esize(cfg));
    fill(cfg, wr[0], n, in);
    fill(cfg, wr[1], n, inout);
    reference(cfg, wr, 0, 2, n, want);
    OK(rrt_reduce_local(in, inout, n, etype(cfg), eop(cfg)));
    expect(cfg, inout, want, n, 2, "reduce_local");
    free(in);
    free(inout);
    free(want);
  }
  int32_t a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
  OK(rrt_reduce_local(a, b, 0, RRT_INT32, RRT_SUM));
  if (b[0] != 10) FAIL("reduce_local of 0 elements changed inoutbuf");
  EXPECT_RC(RRT_ERR_BUFFER, rrt_reduce_local(a, a + 1, 2, RRT_INT32, RRT_SUM));
  EXPECT_RC(RRT_ERR_BUFFER, rrt_reduce_local(NULL, b, 1, RRT_INT32, RRT_SUM));
  EXPECT_RC(RRT_ERR_TYPE, rrt_reduce_local(a, b, 1, (rrt_datatype_t)9999, RRT_SUM));
  EXPECT_RC(RRT_ERR_OP, rrt_reduce_local(a, b, 1, RRT_INT32, (rrt_op_t)9999));
  EXPECT_RC(RRT_ERR_OP, rrt_reduce_local(a, b, 1, RRT_INT32, RRT_MINLOC));
  if (b[0] != 10 || b[1] != 20) FAIL("a failed reduce_local changed inoutbuf");
}

static void run_all(Ctx* c) {
  size_t counts[4] = {0, 1, 1021, g_big};
  for (int k = 0; k < (g_big ? 4 : 3); ++k) {
    t_reductions(c, counts[k]);
    t_data(c, counts[k] * (k == 3 ? 4 : 1));
  }
  t_outstanding(c);
  t_empty(c);
  t_errors(c);
  OK(rrt_barrier(c->comm));
}

int main(int argc, char** argv) {
  OK(rrt_init(&argc, &argv));
  int size;
  OK(rrt_comm_rank(RRT_COMM_WORLD, &g_rank));
  OK(rrt_comm_size(RRT_COMM_WORLD, &size));
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--big=", 6) == 0) g_big = (size_t)atol(argv[i] + 6);
    if (strcmp(argv[i], "--alloc=all") == 0) g_alloc_shared = 1;
    if (strcmp(argv[i], "--alloc=even") == 0) g_alloc_shared = g_rank % 2 == 0;
  }
  OK(rrt_type_contiguous(2, RRT_UINT32, &g_pair));
  OK(rrt_op_create(affine, NULL, 0, &g_affine));
  if (size > 64) {
    printf("SKIP coll_check: at most 64 ranks\n");
    rrt_finalize();
    return 0;
  }
  Ctx w = {RRT_COMM_WORLD, g_rank, size, {0}, "world"};
  for (int r = 0; r < size; ++r) w.wr[r] = r;
  t_reduce_local();
  run_all(&w);
  /* Split: odd and even world ranks, in reverse order (key = -rank). */
  Ctx s = {RRT_COMM_NULL, 0, 0, {0}, "split"};
  OK(rrt_comm_split(RRT_COMM_WORLD, g_rank % 2, -g_rank, &s.comm));
  OK(rrt_comm_rank(s.comm, &s.rank));
  OK(rrt_comm_size(s.comm, &s.size));
  for (int r = 0; r < s.size; ++r) OK(rrt_comm_world_rank(s.comm, r, &s.wr[r]));
  run_all(&s);
  OK(rrt_comm_free(&s.comm));
  OK(rrt_op_free(&g_affine));
  OK(rrt_type_free(&g_pair));
  /* Everyone's verdict. */
  int mine = g_failures, all = 0;
  OK(rrt_allreduce(&mine, &all, 1, RRT_INT32, RRT_SUM, RRT_COMM_WORLD));
  if (g_rank == 0) {
    if (all == 0) printf("PASS coll_check (%d ranks)\n", size);
    else printf("FAIL coll_check: %d failed checks\n", all);
  }
  OK(rrt_finalize());
  return all ? 1 : 0;
}
