/* One-sided communication (MPI-3 RMA): every window flavour (create, allocate, dynamic, shared) with
 * every synchronization mode (fence, lock/unlock shared and exclusive, lock_all + flush /
 * flush_local, post/start/complete/wait), put / get / accumulate / get_accumulate /
 * fetch_and_op / compare_and_swap at sizes from one byte to 4 MiB (eager, the inline-header
 * boundary and rendezvous), accumulate ordering, request-based operations, derived target
 * datatypes, window attributes and groups. Under rrt also: accesses outside the target's window
 * fail with MPI_ERR_RMA_RANGE and leave memory untouched. Any number of ranks >= 2. */
#include "mtest.h"

#include <stdint.h>

#define MAXB (4 << 20) /* largest transfer */
static const int sizes[] = {1, 8, 200, 224, 225, 4096, 65536, 1 << 20, MAXB};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static int rank, nprocs;

static unsigned char pat(int who, int size, long i) {
  return (unsigned char)(who * 31 + size * 7 + i * 13 + (i >> 8));
}

enum { CREATE, ALLOCATE, DYNAMIC, SHARED };
static const char *flavname[] = {"create", "allocate", "dynamic", "shared"};

/* A window of bytes bytes per rank; *mem is the local memory, disp0[r] the displacement that
 * addresses rank r's first byte (0, or its address for dynamic windows). */
static MPI_Win make_win(int flav, MPI_Aint bytes, unsigned char **mem, MPI_Aint *disp0) {
  MPI_Win win;
  if (flav == CREATE) {
    MPI_Alloc_mem(bytes, MPI_INFO_NULL, mem);
    MPI_Win_create(*mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  } else if (flav == ALLOCATE) {
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, mem, &win);
  } else if (flav == SHARED) {  /* the tests run all ranks on one node */
    MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, mem, &win);
  } else {
    MPI_Alloc_mem(bytes, MPI_INFO_NULL, mem);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_attach(win, *mem, bytes);
  }
  MPI_Aint mine = 0;
  if (flav == DYNAMIC) MPI_Get_address(*mem, &mine);
  MPI_Allgather(&mine, 1, MPI_AINT, disp0, 1, MPI_AINT, MPI_COMM_WORLD);
  return win;
}

static void free_win(int flav, MPI_Win *win, unsigned char *mem) {
  if (flav == DYNAMIC) MPI_Win_detach(*win, mem);
  MPI_Win_free(win);
  if (flav != ALLOCATE && flav != SHARED) MPI_Free_mem(mem);
}

static int check_bytes(const unsigned char *p, int who, int size, long n) {
  for (long i = 0; i < n; ++i)
    if (p[i] != pat(who, size, i)) return 0;
  return 1;
}

/* put and get under fence, to the right neighbour, every size */
static void test_fence(int flav) {
  unsigned char *mem, *buf = malloc(MAXB);
  MPI_Aint *d0 = malloc(sizeof(MPI_Aint) * nprocs);
  MPI_Win win = make_win(flav, MAXB, &mem, d0);
  int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
  for (int k = 0; k < NSIZES; ++k) {
    int n = sizes[k];
    for (long i = 0; i < n; ++i) buf[i] = pat(rank, n, i);
    MPI_Win_fence(0, win);
    MPI_Put(buf, n, MPI_BYTE, right, d0[right], n, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    CHECK(check_bytes(mem, left, n, n));
    /* get it back from the right neighbour: it holds my pattern */
    memset(buf, 0, (size_t)(unsigned)n);
    MPI_Get(buf, n, MPI_BYTE, right, d0[right], n, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    CHECK(check_bytes(buf, rank, n, n));
  }
  MPI_Win_fence(0, win);
  free_win(flav, &win, mem);
  free(buf);
  free(d0);
  say("fence put/get %s: done", flavname[flav]);
}

/* every rank accumulates into rank 0 under an exclusive lock; then shared-lock
 * fetch_and_op tickets, compare_and_swap, get_accumulate with MPI_NO_OP / MPI_REPLACE */
static void test_atomics(int flav) {
  const int N = 1024, K = 50;
  unsigned char *mem;
  MPI_Aint *d0 = malloc(sizeof(MPI_Aint) * nprocs);
  MPI_Win win = make_win(flav, (N + 8 + nprocs) * sizeof(long), &mem, d0);
  long *w = (long *)mem;
  memset(w, 0, (N + 8 + nprocs) * sizeof(long));
  MPI_Barrier(MPI_COMM_WORLD);
  long *v = malloc(sizeof(long) * N);
  for (int i = 0; i < N; ++i) v[i] = i + rank;
  for (int rep = 0; rep < 3; ++rep) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Accumulate(v, N, MPI_LONG, 0, d0[0], N, MPI_LONG, MPI_SUM, win);
    MPI_Win_unlock(0, win);
  }
  /* tickets */
  long *got = malloc(sizeof(long) * K);
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  for (int i = 0; i < K; ++i) {
    long one = 1;
    MPI_Fetch_and_op(&one, &got[i], MPI_LONG, 0, d0[0] + (N + 1) * sizeof(long), MPI_SUM, win);
    MPI_Win_flush(0, win);
  }
  /* compare and swap on my slot: first succeeds, second fails */
  long cmp = 0, val = rank + 1, old = -1;
  MPI_Aint slot = d0[0] + (N + 8 + rank) * sizeof(long);
  MPI_Compare_and_swap(&val, &cmp, &old, MPI_LONG, 0, slot, win);
  MPI_Win_flush(0, win);
  CHECK(old == 0);
  long val2 = 100;
  MPI_Compare_and_swap(&val2, &cmp, &old, MPI_LONG, 0, slot, win);
  MPI_Win_flush(0, win);
  CHECK(old == rank + 1);
  MPI_Win_unlock(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    for (int i = 0; i < N; ++i) {
      long want = 3 * ((long)i * nprocs + (long)nprocs * (nprocs - 1) / 2);
      if (w[i] != want) {
        CHECK(w[i] == want);
        break;
      }
    }
    CHECK(w[N + 1] == (long)K * nprocs);
    for (int r = 0; r < nprocs; ++r) CHECK(w[N + 8 + r] == r + 1);
  }
  /* tickets are all distinct: 0 .. K*nprocs-1 */
  long *all = malloc(sizeof(long) * K * nprocs);
  MPI_Gather(got, K, MPI_LONG, all, K, MPI_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    char *seen = calloc(K * nprocs, 1);
    for (int i = 0; i < K * nprocs; ++i) {
      CHECK(all[i] >= 0 && all[i] < K * nprocs);
      if (all[i] >= 0 && all[i] < K * nprocs) {
        CHECK(!seen[all[i]]);
        seen[all[i]] = 1;
      }
    }
    free(seen);
  }
  /* get_accumulate: MPI_NO_OP reads, MPI_REPLACE swaps (lock_all epoch) */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock_all(0, win);
  long rd = -1, dummy = 0;
  MPI_Get_accumulate(&dummy, 1, MPI_LONG, &rd, 1, MPI_LONG, 0, d0[0] + (N + 1) * sizeof(long), 1,
                     MPI_LONG, MPI_NO_OP, win);
  MPI_Win_flush(0, win);
  CHECK(rd == (long)K * nprocs);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    long nv = 777, prev = 0;
    MPI_Get_accumulate(&nv, 1, MPI_LONG, &prev, 1, MPI_LONG, 0, d0[0] + (N + 1) * sizeof(long), 1,
                       MPI_LONG, MPI_REPLACE, win);
    MPI_Win_unlock(0, win);
    CHECK(prev == (long)K * nprocs);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) CHECK(w[N + 1] == 777);
  MPI_Barrier(MPI_COMM_WORLD);
  free(all);
  free(got);
  free(v);
  free_win(flav, &win, mem);
  free(d0);
  say("lock accumulate/fetch_and_op/compare_and_swap/get_accumulate %s: done", flavname[flav]);
}

/* accumulates from one origin to one target apply in issue order, large after small and
 * small after large */
static void test_acc_order(void) {
  const int N = (1 << 20) / sizeof(int); /* 1 MiB: its data goes by rendezvous */
  unsigned char *mem;
  MPI_Aint d0[64];
  MPI_Win win = make_win(ALLOCATE, N * sizeof(int), &mem, d0);
  int *w = (int *)mem;
  memset(w, 0, N * sizeof(int));
  MPI_Barrier(MPI_COMM_WORLD);
  int *big = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) big[i] = 5;
  if (rank == 1) {
    int one = 1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    for (int rep = 0; rep < 4; ++rep) {
      MPI_Accumulate(big, N, MPI_INT, 0, 0, N, MPI_INT, MPI_REPLACE, win); /* all = 5 */
      MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win);   /* w[0] = 6 */
      MPI_Accumulate(&one, 1, MPI_INT, 0, (N - 1) * sizeof(int), 1, MPI_INT, MPI_SUM, win);
    }
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    CHECK(w[0] == 6);
    CHECK(w[N / 2] == 5);
    CHECK(w[N - 1] == 6);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(big);
  MPI_Win_free(&win);
  say("accumulate ordering: done");
}

/* post/start/complete/wait around a ring, every size; and lock_all with flush / flush_local
 * and request-based operations */
static void test_pscw_and_requests(int flav) {
  unsigned char *mem, *buf = malloc(MAXB);
  MPI_Aint *d0 = malloc(sizeof(MPI_Aint) * nprocs);
  MPI_Win win = make_win(flav, MAXB, &mem, d0);
  int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
  MPI_Group world, gl, gr;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &left, &gl);
  MPI_Group_incl(world, 1, &right, &gr);
  for (int k = 0; k < NSIZES; ++k) {
    int n = sizes[k];
    for (long i = 0; i < n; ++i) buf[i] = pat(rank, n, i);
    MPI_Win_post(gl, 0, win);
    MPI_Win_start(gr, 0, win);
    MPI_Put(buf, n, MPI_BYTE, right, d0[right], n, MPI_BYTE, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    CHECK(check_bytes(mem, left, n, n));
  }
  /* test instead of wait */
  MPI_Win_post(gl, 0, win);
  MPI_Win_start(gr, 0, win);
  MPI_Put(buf, 1, MPI_BYTE, right, d0[right], 1, MPI_BYTE, win);
  MPI_Win_complete(win);
  int flag = 0;
  while (!flag) MPI_Win_test(win, &flag);
  MPI_Barrier(MPI_COMM_WORLD);
  /* lock_all: everyone reads its right neighbour's memory (which holds the left-of-right
   * = my pattern of the last size) with Rget, flush_local, Rput back */
  MPI_Win_lock_all(0, win);
  for (int k = 0; k < NSIZES; ++k) {
    int n = sizes[k];
    MPI_Request rq;
    unsigned char *tmp = malloc(n);
    for (long i = 0; i < n; ++i) tmp[i] = pat(rank + 7, n, i);
    MPI_Rput(tmp, n, MPI_BYTE, right, d0[right] + MAXB - n, n, MPI_BYTE, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Win_flush(right, win);
    memset(tmp, 0, (size_t)(unsigned)n);
    MPI_Rget(tmp, n, MPI_BYTE, right, d0[right] + MAXB - n, n, MPI_BYTE, win, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK(check_bytes(tmp, rank + 7, n, n));
    memset(tmp, 0, (size_t)(unsigned)n);
    MPI_Get(tmp, n, MPI_BYTE, right, d0[right] + MAXB - n, n, MPI_BYTE, win);
    MPI_Win_flush_local(right, win);
    CHECK(check_bytes(tmp, rank + 7, n, n));
    free(tmp);
  }
  MPI_Win_flush_all(win);
  MPI_Win_flush_local_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Group_free(&gl);
  MPI_Group_free(&gr);
  MPI_Group_free(&world);
  free_win(flav, &win, mem);
  free(buf);
  free(d0);
  say("pscw put, lock_all rput/rget/flush %s: done", flavname[flav]);
}

/* a strided target datatype, a strided origin datatype, and disp_unit scaling */
static void test_derived(void) {
  const int N = 64;
  int *mem;
  MPI_Win win;
  MPI_Win_allocate(2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
  for (int i = 0; i < 2 * N; ++i) mem[i] = -1;
  MPI_Datatype vec;
  MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
  int src[N], back[2 * N];
  for (int i = 0; i < N; ++i) src[i] = rank * 1000 + i;
  MPI_Win_fence(0, win);
  MPI_Put(src, N, MPI_INT, right, 1, 1, vec, win); /* odd slots of the neighbour */
  MPI_Win_fence(0, win);
  for (int i = 0; i < N; ++i) {
    CHECK(mem[2 * i] == -1);
    CHECK(mem[2 * i + 1] == left * 1000 + i);
  }
  /* strided origin: read the neighbour's odd slots into every other int of back */
  for (int i = 0; i < 2 * N; ++i) back[i] = -2;
  MPI_Get(back, 1, vec, right, 1, 1, vec, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < N; ++i) {
    CHECK(back[2 * i] == rank * 1000 + i);
    CHECK(back[2 * i + 1] == -2);
  }
  /* accumulate through the vector type */
  MPI_Accumulate(src, N, MPI_INT, right, 1, 1, vec, MPI_SUM, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < N; ++i) CHECK(mem[2 * i + 1] == 2 * (left * 1000 + i));
  MPI_Type_free(&vec);
  /* attributes and group */
  void *base;
  MPI_Aint *size;
  int *unit, *flavor, flag;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  CHECK(flag && base == mem);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &size, &flag);
  CHECK(flag && *size == (MPI_Aint)(2 * N * sizeof(int)));
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
  CHECK(flag && *unit == (int)sizeof(int));
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
  MPI_Group g, wg;
  int cmp;
  MPI_Win_get_group(win, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Group_compare(g, wg, &cmp);
  CHECK(cmp == MPI_IDENT);
  MPI_Group_free(&g);
  MPI_Group_free(&wg);
  MPI_Win_free(&win);
  CHECK(win == MPI_WIN_NULL);
  say("derived target types, attributes, group: done");
}

#ifdef RRT_MPI
/* rrt only (other implementations may not check): out-of-range accesses are refused with
 * MPI_ERR_RMA_RANGE and write nothing; a detached region is no longer accessible */
static void test_range(void) {
  const int N = 16;
  unsigned char *mem;
  MPI_Aint d0[64];
  MPI_Win win = make_win(CREATE, N, &mem, d0);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  memset(mem, 0x5a, N);
  MPI_Barrier(MPI_COMM_WORLD);
  unsigned char buf[64];
  memset(buf, 1, sizeof buf);
  int right = (rank + 1) % nprocs, cls = 0, rc;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  rc = MPI_Put(buf, 4, MPI_BYTE, right, N - 2, 4, MPI_BYTE, win); /* crosses the end */
  CHECK(rc == MPI_SUCCESS);
  rc = MPI_Win_flush(right, win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE);
  rc = MPI_Get(buf, 8, MPI_BYTE, right, 100, 8, MPI_BYTE, win);
  rc = MPI_Win_flush(right, win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE);
  int one = 1;
  MPI_Accumulate(&one, 1, MPI_INT, right, N - 2, 1, MPI_INT, MPI_SUM, win);
  rc = MPI_Win_unlock(right, win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE);
  /* big (rendezvous) put out of range: the data is discarded, the call reports it */
  unsigned char *big = malloc(1 << 20);
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Put(big, 1 << 20, MPI_BYTE, right, 0, 1 << 20, MPI_BYTE, win);
  rc = MPI_Win_unlock(right, win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE);
  free(big);
  /* in range still works afterwards */
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  rc = MPI_Put(buf, 1, MPI_BYTE, right, N - 1, 1, MPI_BYTE, win);
  rc |= MPI_Win_unlock(right, win);
  CHECK(rc == MPI_SUCCESS);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < N - 1; ++i) CHECK(mem[i] == 0x5a);
  CHECK(mem[N - 1] == 1);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Free_mem(mem);
  /* dynamic: outside any attached region, and after detach */
  win = make_win(DYNAMIC, N, &mem, d0);
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Put(buf, 1, MPI_BYTE, right, d0[right] + N, 1, MPI_BYTE, win);
  rc = MPI_Win_unlock(right, win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_detach(win, mem);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Put(buf, 1, MPI_BYTE, right, d0[right], 1, MPI_BYTE, win);
  rc = MPI_Win_unlock(right, win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_RANGE);
  /* synchronization errors */
  rc = MPI_Win_unlock(right, win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_SYNC);
  rc = MPI_Win_complete(win);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RMA_SYNC);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Free_mem(mem);
}
#endif

/* A shared window over the node's ranks (MPI_Comm_split_type): parts of different sizes (odd
 * ranks empty) back to back in rank order, each rank's stores seen by every other's loads
 * through MPI_Win_shared_query after MPI_Win_sync + barrier, and its attributes. */
static void test_shared_loadstore(void) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int me, n;
  MPI_Comm_rank(node, &me);
  MPI_Comm_size(node, &n);
  CHECK(n == nprocs);
  const int count = 1000;
  int *mine;
  MPI_Win win;
  MPI_Win_allocate_shared(me % 2 ? 0 : (MPI_Aint)((count + me) * sizeof(int)), sizeof(int),
                          MPI_INFO_NULL, node, &mine, &win);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  for (int i = 0; i < (me % 2 ? 0 : count + me); ++i) mine[i] = me * 100000 + i;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  int *next = NULL;
  for (int r = 0; r < n; ++r) {
    MPI_Aint size;
    int unit;
    int *base;
    MPI_Win_shared_query(win, r, &size, &unit, &base);
    CHECK(unit == (int)sizeof(int));
    CHECK(size == (MPI_Aint)(r % 2 ? 0 : (count + r) * sizeof(int)));
    if (size == 0) continue;
    CHECK(next == NULL || base == next);
    next = base + size / (MPI_Aint)sizeof(int);
    int bad = 0;
    for (int i = 0; i < count + r; ++i) bad += base[i] != r * 100000 + i;
    CHECK(bad == 0);
  }
  MPI_Win_unlock_all(win);
  int *flavor, flag;
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_SHARED);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  say("shared window loads and stores: done");
}

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  for (int f = CREATE; f <= SHARED; ++f) {
    test_fence(f);
    test_atomics(f);
    test_pscw_and_requests(f);
  }
  test_shared_loadstore();
  test_acc_order();
  test_derived();
#ifdef RRT_MPI
  test_range();
#endif
  return mt_finish();
}
