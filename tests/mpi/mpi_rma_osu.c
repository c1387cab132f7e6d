/* One-sided benchmarks the way the OSU Micro-Benchmarks (osu_put_latency, osu_get_latency,
 * osu_put_bw, osu_put_bibw, osu_acc_latency, osu_get_acc_latency, osu_fop_latency,
 * osu_cas_latency) drive RMA: a window made by MPI_Win_create, MPI_Win_allocate or
 * MPI_Win_create_dynamic + MPI_Win_attach (the displacement sent to the peer), then timed loops
 * in each synchronization mode (lock/unlock, flush, flush_local, lock_all, pscw, fence).
 * Written for this project; the data moved is checked after each loop. Rank 0 prints which
 * loops ran (compared with Open MPI); timings go to stderr. Two ranks (more are idle). */
#include "mtest.h"

#define MAXB (1 << 22)
enum { WIN_CREATE, WIN_ALLOCATE, WIN_DYNAMIC };
enum { LOCK, FLUSH, FLUSH_LOCAL, LOCK_ALL, PSCW, FENCE };
static const char *wname[] = {"create", "allocate", "dynamic"};
static const char *sname[] = {"lock", "flush", "flush_local", "lock_all", "pscw", "fence"};

static int rank, nprocs;
static MPI_Group peer_group;

static void make_window(int kind, char **buf, char **win_base, MPI_Aint size, MPI_Aint *disp,
                        MPI_Win *win) {
  MPI_Alloc_mem(size, MPI_INFO_NULL, buf);
  memset(*buf, 0, size);
  *disp = 0;
  switch (kind) {
    case WIN_CREATE:
      MPI_Alloc_mem(size, MPI_INFO_NULL, win_base);
      MPI_Win_create(*win_base, size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win);
      break;
    case WIN_ALLOCATE:
      MPI_Win_allocate(size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, win_base, win);
      break;
    case WIN_DYNAMIC: {
      MPI_Alloc_mem(size, MPI_INFO_NULL, win_base);
      MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, win);
      MPI_Win_attach(*win, *win_base, size);
      MPI_Aint mine;
      MPI_Get_address(*win_base, &mine);
      if (rank == 0) {
        MPI_Send(&mine, 1, MPI_AINT, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(disp, 1, MPI_AINT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(disp, 1, MPI_AINT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&mine, 1, MPI_AINT, 0, 0, MPI_COMM_WORLD);
      }
      break;
    }
  }
  memset(*win_base, 0, size);
  MPI_Barrier(MPI_COMM_WORLD);
}

static void free_window(int kind, char *buf, char *win_base, MPI_Win *win) {
  if (kind == WIN_DYNAMIC) MPI_Win_detach(*win, win_base);
  MPI_Win_free(win);
  if (kind != WIN_ALLOCATE) MPI_Free_mem(win_base);
  MPI_Free_mem(buf);
}

typedef enum { PUT, GET, ACC, GACC, FOP, CAS } Op;
static const char *oname[] = {"put", "get", "acc", "get_acc", "fop", "cas"};

static void issue(Op op, char *buf, char *res, int size, MPI_Aint disp, MPI_Win win) {
  switch (op) {
    case PUT: MPI_Put(buf, size, MPI_CHAR, 1, disp, size, MPI_CHAR, win); break;
    case GET: MPI_Get(buf, size, MPI_CHAR, 1, disp, size, MPI_CHAR, win); break;
    case ACC:
      MPI_Accumulate(buf, size / 4, MPI_INT, 1, disp, size / 4, MPI_INT, MPI_SUM, win);
      break;
    case GACC:
      MPI_Get_accumulate(buf, size / 4, MPI_INT, res, size / 4, MPI_INT, 1, disp, size / 4,
                         MPI_INT, MPI_SUM, win);
      break;
    case FOP: MPI_Fetch_and_op(buf, res, MPI_LONG_LONG, 1, disp, MPI_SUM, win); break;
    case CAS: MPI_Compare_and_swap(buf, res + 8, res, MPI_LONG_LONG, 1, disp, win); break;
  }
}

/* One latency loop: rank 0 is the origin, rank 1 the target. Returns microseconds/op. */
static double latency(Op op, int sync, int size, int iters, char *buf, char *res, MPI_Aint disp,
                      MPI_Win win) {
  double t0 = 0;
  if (rank == 0) {
    if (sync == FLUSH || sync == FLUSH_LOCAL) MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    if (sync == LOCK_ALL) MPI_Win_lock_all(0, win);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      switch (sync) {
        case LOCK:
          MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
          issue(op, buf, res, size, disp, win);
          MPI_Win_unlock(1, win);
          break;
        case FLUSH:
          issue(op, buf, res, size, disp, win);
          MPI_Win_flush(1, win);
          break;
        case FLUSH_LOCAL:
          issue(op, buf, res, size, disp, win);
          MPI_Win_flush_local(1, win);
          break;
        case LOCK_ALL:
          issue(op, buf, res, size, disp, win);
          MPI_Win_flush(1, win);
          break;
        case PSCW:
          MPI_Win_start(peer_group, 0, win);
          issue(op, buf, res, size, disp, win);
          MPI_Win_complete(win);
          MPI_Win_post(peer_group, 0, win);
          MPI_Win_wait(win);
          break;
        case FENCE:
          MPI_Win_fence(0, win);
          issue(op, buf, res, size, disp, win);
          MPI_Win_fence(0, win);
          MPI_Win_fence(0, win);
          break;
      }
    }
    t0 = MPI_Wtime() - t0;
    if (sync == FLUSH || sync == FLUSH_LOCAL) MPI_Win_unlock(1, win);
    if (sync == LOCK_ALL) MPI_Win_unlock_all(win);
  } else if (rank == 1) {
    for (int i = 0; i < iters; ++i) {
      if (sync == PSCW) {
        MPI_Win_post(peer_group, 0, win);
        MPI_Win_wait(win);
        MPI_Win_start(peer_group, 0, win);
        MPI_Win_complete(win);
      } else if (sync == FENCE) {
        MPI_Win_fence(0, win);
        MPI_Win_fence(0, win);
        MPI_Win_fence(0, win);
      }
    }
  } else if (sync == FENCE) {
    for (int i = 0; i < iters; ++i) {
      MPI_Win_fence(0, win);
      MPI_Win_fence(0, win);
      MPI_Win_fence(0, win);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return iters ? t0 * 1e6 / iters : 0;
}

static int errors_before(void) { return mt_errors; }

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (nprocs < 2) {
    say("needs 2 ranks");
    return mt_finish();
  }
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int peer = rank == 0 ? 1 : 0;
  MPI_Group_incl(world, 1, &peer, &peer_group);
  char *res = calloc(MAXB, 1);
  for (int kind = WIN_CREATE; kind <= WIN_DYNAMIC; ++kind) {
    char *buf, *wb;
    MPI_Aint disp;
    MPI_Win win;
    make_window(kind, &buf, &wb, MAXB, &disp, &win);
    for (Op op = PUT; op <= CAS; ++op) {
      int before = errors_before();
      for (int sync = LOCK; sync <= FENCE; ++sync) {
        int maxsize = (op == FOP || op == CAS) ? 8 : MAXB;
        for (int size = (op == FOP || op == CAS) ? 8 : (op == ACC || op == GACC ? 4 : 1);
             size <= maxsize; size *= 16) {
          int iters = size > 65536 ? 4 : 20;
          /* data: origin pattern, target zero; after the loop check the effect */
          MPI_Barrier(MPI_COMM_WORLD);
          for (int i = 0; i < size; ++i) buf[i] = (char)(op == GET ? 0 : (i % 7) + 1);
          memset(wb, 0, (size_t)(unsigned)size);
          if (rank == 1 && op == GET)
            for (int i = 0; i < size; ++i) wb[i] = (char)(i % 11 + 3);
          if (op == FOP || op == CAS) {
            long long one = 1;
            memcpy(buf, &one, 8);
            memset(res, 0, 16); /* CAS compares against 0: only the first swap succeeds */
          }
          MPI_Barrier(MPI_COMM_WORLD);
          double us = latency(op, sync, size, iters, buf, res, disp, win);
          if (rank == 0) fprintf(stderr, "%-8s %-11s %-8s %8d %10.2f us\n", oname[op], sname[sync],
                                 wname[kind], size, us);
          /* results */
          if (rank == 1 && (op == PUT)) {
            for (int i = 0; i < size; ++i)
              if (wb[i] != (char)(i % 7 + 1)) {
                CHECK(wb[i] == (char)(i % 7 + 1));
                break;
              }
          }
          if (rank == 0 && op == GET) {
            for (int i = 0; i < size; ++i)
              if (buf[i] != (char)(i % 11 + 3)) {
                CHECK(buf[i] == (char)(i % 11 + 3));
                break;
              }
          }
          if (rank == 1 && (op == ACC || op == GACC)) {
            int *w = (int *)wb, *b = (int *)buf; /* buf on rank 1 holds the same pattern */
            /* The pattern's ints times iters overflow int and the accumulated sum wraps (rrt
               adds signed integers in their unsigned twin): the expected value wraps the same
               way in unsigned (b[i] * iters in int is undefined, and UBSan stops on it). */
            for (int i = 0; i < size / 4; ++i) {
              int want = (int)((unsigned)b[i] * (unsigned)iters);
              if (w[i] != want) {
                CHECK(w[i] == want);
                break;
              }
            }
          }
          if (rank == 1 && op == FOP) {
            long long v;
            memcpy(&v, wb, 8);
            CHECK(v == iters);
          }
          if (rank == 1 && op == CAS) {
            long long v;
            memcpy(&v, wb, 8);
            CHECK(v == 1);
          }
        }
      }
      say("osu-style %s over %s window: %s", oname[op], wname[kind],
          mt_errors == before ? "ok" : "wrong data");
    }
    /* osu_put_bw: a window of puts, then one flush; osu_put_bibw: pscw both ways */
    for (int size = 1; size <= MAXB; size *= 64) {
      const int window = 32;
      for (int i = 0; i < size; ++i) buf[i] = (char)(i % 5 + 1);
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        for (int j = 0; j < window; ++j)
          MPI_Put(buf, size, MPI_CHAR, 1, disp + ((j + 1) * (long)size <= MAXB ? j * (MPI_Aint)size : 0),
                  size, MPI_CHAR, win);
        MPI_Win_flush(1, win);
        MPI_Win_unlock(1, win);
      }
      MPI_Barrier(MPI_COMM_WORLD);
      if (rank == 1) CHECK(wb[size - 1] == (char)((size - 1) % 5 + 1));
      if (rank < 2) {
        MPI_Win_post(peer_group, 0, win);
        MPI_Win_start(peer_group, 0, win);
        for (int j = 0; j < window; ++j)
          MPI_Put(buf, size, MPI_CHAR, peer, disp, size, MPI_CHAR, win);
        MPI_Win_complete(win);
        MPI_Win_wait(win);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
    say("osu-style put_bw / put_bibw over %s window: done", wname[kind]);
    free_window(kind, buf, wb, &win);
  }
  free(res);
  MPI_Group_free(&peer_group);
  MPI_Group_free(&world);
  return mt_finish();
}
