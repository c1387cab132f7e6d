/*
 * Many outstanding non-blocking operations: each rank posts --count receives from and
 * --count sends to every other rank (and itself) at once, sizes cycling through eager and
 * rendezvous classes, tags distinct per message. Receives are posted in reverse tag order so
 * that matching must search by tag. Even ranks post sends first and odd ranks receives first,
 * so both the expected and the unexpected queue are loaded. Completion mixes waitsome,
 * testany, testall and waitall; every request must complete exactly once.
 */
#include "mp_util.h"

static size_t msg_size(size_t t, int i) {
  static const int kClass[] = {0, 1, 2, 3, 4};
  switch (kClass[i % 5]) {
    case 0: return (size_t)(i % 7);                 /* tiny, including 0 */
    case 1: return 64 + (size_t)i;
    case 2: return t > 0 ? t - 1 : 0;
    case 3: return t + 1;
    default: return 3 * t + 5 + (size_t)i;
  }
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  int count = (int)mp_arg_size(argc, argv, "--count", 32);
  int npeers = mp_size, total = npeers * count;

  rrt_request_t *rreq = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)total);
  rrt_request_t *sreq = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)total);
  rrt_status_t *rst = (rrt_status_t *)mp_alloc(sizeof(rrt_status_t) * (size_t)total);
  unsigned char **rb = (unsigned char **)mp_alloc(sizeof(void *) * (size_t)total);
  unsigned char **sb = (unsigned char **)mp_alloc(sizeof(void *) * (size_t)total);
  int *done = (int *)calloc((size_t)total, sizeof(int));

  /* Slot p*count+i: message i between this rank and peer p (p may be this rank). */
  for (int p = 0; p < npeers; ++p)
    for (int i = 0; i < count; ++i) {
      size_t n = msg_size(t, i + p);
      int k = p * count + i;
      sb[k] = (unsigned char *)mp_alloc(n);
      mp_fill(sb[k], n, mp_seed(mp_rank, p, i, n));
      /* Both sides size the message by the sender's (i + sender) rule, see below. */
      size_t rn = msg_size(t, i + mp_rank);
      rb[k] = (unsigned char *)mp_alloc(rn);
      memset(rb[k], 0, rn);
    }

  for (int phase = 0; phase < 2; ++phase) {
    int post_recvs = (phase == 0) == (mp_rank % 2 == 1);
    if (post_recvs) {
      for (int p = 0; p < npeers; ++p)
        for (int i = count - 1; i >= 0; --i) {
          int k = p * count + i;
          MP_CALL(rrt_irecv(rb[k], msg_size(t, i + mp_rank), RRT_BYTE, p, i, RRT_COMM_WORLD, &rreq[k]));
        }
    } else {
      for (int p = 0; p < npeers; ++p)
        for (int i = 0; i < count; ++i) {
          int k = p * count + i;
          MP_CALL(rrt_isend(sb[k], msg_size(t, i + p), RRT_BYTE, p, i, RRT_COMM_WORLD, &sreq[k]));
        }
    }
  }

  /* Receives: first a third by waitsome, then testany until half are done, the rest testall. */
  int ndone = 0;
  while (ndone < total / 3) {
    int outcount = 0;
    int *idx = (int *)mp_alloc(sizeof(int) * (size_t)total);
    rrt_status_t *sts = (rrt_status_t *)mp_alloc(sizeof(rrt_status_t) * (size_t)total);
    MP_CALL(rrt_waitsome((size_t)total, rreq, &outcount, idx, sts));
    MP_EXPECT(outcount >= 1 && outcount <= total - ndone, "waitsome outcount %d with %d pending",
              outcount, total - ndone);
    for (int j = 0; j < outcount && j < total; ++j) {
      int k = idx[j];
      if (k < 0 || k >= total || done[k]) {
        MP_EXPECT(0, "waitsome returned index %d (out of range or already completed)", k);
        continue;
      }
      MP_EXPECT(rreq[k] == RRT_REQUEST_NULL, "waitsome left request %d non-NULL", k);
      done[k] = 1;
      rst[k] = sts[j];
      ++ndone;
    }
    free(idx);
    free(sts);
  }
  while (ndone < total / 2) {
    int index = -1, flag = 0;
    rrt_status_t st;
    MP_CALL(rrt_testany((size_t)total, rreq, &index, &flag, &st));
    if (!flag) continue;
    if (index < 0 || index >= total || done[index]) {
      MP_EXPECT(0, "testany returned index %d (out of range or already completed)", index);
      break;
    }
    MP_EXPECT(rreq[index] == RRT_REQUEST_NULL, "testany left request %d non-NULL", index);
    done[index] = 1;
    rst[index] = st;
    ++ndone;
  }
  {
    int flag = 0;
    rrt_status_t *sts = (rrt_status_t *)mp_alloc(sizeof(rrt_status_t) * (size_t)total);
    while (!flag) MP_CALL(rrt_testall((size_t)total, rreq, &flag, sts));
    for (int k = 0; k < total; ++k) {
      MP_EXPECT(rreq[k] == RRT_REQUEST_NULL, "testall left request %d non-NULL", k);
      if (!done[k]) {
        done[k] = 1;
        rst[k] = sts[k];
      }
    }
    free(sts);
  }
  MP_CALL(rrt_waitall((size_t)total, sreq, RRT_STATUSES_IGNORE));

  for (int p = 0; p < npeers; ++p)
    for (int i = 0; i < count; ++i) {
      int k = p * count + i;
      size_t n = msg_size(t, i + mp_rank);
      MP_EXPECT(rst[k].source == p && rst[k].tag == i && rst[k].bytes == n,
                "message %d from %d: status source %d tag %d bytes %zu, want %d %d %zu", i, p,
                rst[k].source, rst[k].tag, rst[k].bytes, p, i, n);
      MP_EXPECT_PATTERN(rb[k], n, mp_seed(p, mp_rank, i, n), "message %d from %d", i, p);
      free(rb[k]);
      free(sb[k]);
    }
  free(rreq); free(sreq); free(rst); free(rb); free(sb); free(done);
  return mp_finish("p2p_nonblocking");
}
