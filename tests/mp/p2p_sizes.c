/*
 * Every size class around the eager limit T (0, 1, T-1, T, T+1, 1 MiB, and up to --max or
 * 64 MiB with --big; also around RRT_SHM_CMA_THRESHOLD and RRT_RNDV_COPY_FRAG when those are
 * set) between every pair of ranks, verified byte by byte, through three paths:
 *   1. non-blocking ring shifts with the receive posted first (expected-queue match),
 *   2. the same with the send posted first (unexpected-queue match),
 *   3. blocking send/recv between rank 0 and each other rank.
 * Guard bytes after each receive buffer catch writes past the received length.
 */
#include "mp_util.h"

#define GUARD 64
#define GUARD_BYTE 0xA5

static unsigned char *recv_buf(size_t max) {
  unsigned char *b = (unsigned char *)mp_alloc(max + GUARD);
  memset(b + max, GUARD_BYTE, GUARD);
  return b;
}

static void check_guard(const unsigned char *b, size_t max, const char *what, size_t size) {
  for (size_t i = 0; i < GUARD; ++i)
    if (b[max + i] != GUARD_BYTE) {
      MP_EXPECT(0, "%s size %zu: receive wrote past the buffer end (guard byte %zu)", what, size, i);
      return;
    }
}

static void check_status(const rrt_status_t *st, int src, int tag, size_t bytes, const char *what) {
  MP_EXPECT(st->source == src, "%s: status.source %d, want %d", what, st->source, src);
  MP_EXPECT(st->tag == tag, "%s: status.tag %d, want %d", what, st->tag, tag);
  MP_EXPECT(st->error == RRT_SUCCESS, "%s: status.error %d", what, st->error);
  MP_EXPECT(st->bytes == bytes, "%s: status.bytes %zu, want %zu", what, st->bytes, bytes);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  size_t max = mp_arg_size(argc, argv, "--max", t + 1 > (1u << 20) ? t + 1 : (1u << 20));
  if (mp_has_arg(argc, argv, "--big")) max = (size_t)64 << 20;
  size_t sizes[MP_MAX_CLASSES];
  int nsizes = mp_size_classes(t, max, sizes);
  if (mp_rank == 0) {
    printf("p2p_sizes: eager limit %zu, %d ranks, sizes:", t, mp_size);
    for (int i = 0; i < nsizes; ++i) printf(" %zu", sizes[i]);
    printf("\n");
  }

  unsigned char *sbuf = (unsigned char *)mp_alloc(max);
  unsigned char *rbuf = recv_buf(max);

  for (int si = 0; si < nsizes; ++si) {
    size_t n = sizes[si];
    /* Path 1 and 2: ring shifts; a 1-rank world shifts by 0 (a self-send). */
    for (int k = (mp_size == 1 ? 0 : 1); k < (mp_size == 1 ? 1 : mp_size); ++k) {
      for (int send_first = 0; send_first < 2; ++send_first) {
        int dst = (mp_rank + k) % mp_size, src = (mp_rank - k + mp_size) % mp_size;
        int tag = si * 1000 + k * 2 + send_first;
        rrt_request_t req[2];
        rrt_status_t st[2];
        char what[96];
        mp_fill(sbuf, n, mp_seed(mp_rank, dst, tag, n));
        memset(rbuf, 0, n);
        if (send_first) {
          MP_CALL(rrt_isend(sbuf, n, RRT_BYTE, dst, tag, RRT_COMM_WORLD, &req[0]));
          MP_CALL(rrt_irecv(rbuf, n, RRT_BYTE, src, tag, RRT_COMM_WORLD, &req[1]));
        } else {
          MP_CALL(rrt_irecv(rbuf, n, RRT_BYTE, src, tag, RRT_COMM_WORLD, &req[1]));
          MP_CALL(rrt_isend(sbuf, n, RRT_BYTE, dst, tag, RRT_COMM_WORLD, &req[0]));
        }
        MP_CALL(rrt_waitall(2, req, st));
        MP_EXPECT(req[0] == RRT_REQUEST_NULL && req[1] == RRT_REQUEST_NULL,
                  "waitall left a request handle non-NULL");
        snprintf(what, sizeof what, "shift %d %s, %zu bytes from %d", k,
                 send_first ? "send-first" : "recv-first", n, src);
        check_status(&st[1], src, tag, n, what);
        MP_EXPECT_PATTERN(rbuf, n, mp_seed(src, mp_rank, tag, n), "%s", what);
        check_guard(rbuf, max, what, n);
      }
    }
    /* Path 3: blocking, rank 0 with each other rank in turn, both directions. */
    for (int peer = 1; peer < mp_size; ++peer) {
      int tag = 500 + si;
      rrt_status_t st;
      char what[96];
      if (mp_rank == 0) {
        mp_fill(sbuf, n, mp_seed(0, peer, tag, n));
        MP_CALL(rrt_send(sbuf, n, RRT_BYTE, peer, tag, RRT_COMM_WORLD));
        memset(rbuf, 0, n);
        MP_CALL(rrt_recv(rbuf, n, RRT_BYTE, peer, tag, RRT_COMM_WORLD, &st));
        snprintf(what, sizeof what, "blocking %zu bytes from %d", n, peer);
        check_status(&st, peer, tag, n, what);
        MP_EXPECT_PATTERN(rbuf, n, mp_seed(peer, 0, tag, n), "%s", what);
        check_guard(rbuf, max, what, n);
      } else if (mp_rank == peer) {
        memset(rbuf, 0, n);
        MP_CALL(rrt_recv(rbuf, n, RRT_BYTE, 0, tag, RRT_COMM_WORLD, &st));
        snprintf(what, sizeof what, "blocking %zu bytes from 0", n);
        check_status(&st, 0, tag, n, what);
        MP_EXPECT_PATTERN(rbuf, n, mp_seed(0, peer, tag, n), "%s", what);
        check_guard(rbuf, max, what, n);
        mp_fill(sbuf, n, mp_seed(peer, 0, tag, n));
        MP_CALL(rrt_send(sbuf, n, RRT_BYTE, 0, tag, RRT_COMM_WORLD));
      }
    }
  }
  free(sbuf);
  free(rbuf);
  return mp_finish("p2p_sizes");
}
