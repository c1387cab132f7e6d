/*
 * Non-overtaking order per (source, tag, communicator) with eager and rendezvous sizes mixed:
 * each rank sends --count messages to the next rank, alternately big (rendezvous) and small
 * (eager), all with the same tag. A small message sent after a big one must not be matched
 * first, even though its data could arrive sooner. Three phases:
 *   A  receives posted before the sends (matched in posting order),
 *   B  sends posted before the receives (unexpected queue), received one by one,
 *   C  tags vary, received with RRT_ANY_TAG on a duplicate of world: order still by sending.
 * Sizes are unique per position, so status.bytes alone identifies misordering (even for the
 * 0-byte first message); the first 4 bytes also carry the sequence number.
 */
#include "mp_util.h"

#define TAG_DATA 3
#define TAG_READY 4

static size_t msg_size(size_t t, int i) {
  if (i == 0) return 0;
  if (i % 2) return 8 + (size_t)i;
  return t + 1 + 8 * (size_t)i;
}

static void make(unsigned char *b, size_t n, int src, int dst, int i) {
  int32_t seq = i;
  mp_fill(b, n, mp_seed(src, dst, 0, (uint64_t)i));
  if (n >= 4) memcpy(b, &seq, 4);
}

static void check(const unsigned char *b, const rrt_status_t *st, size_t t, int src, int i,
                  int want_tag, const char *phase) {
  size_t n = msg_size(t, i);
  int32_t seq = -1;
  if (st->bytes >= 4) memcpy(&seq, b, 4);
  MP_EXPECT(st->bytes == n, "phase %s: receive #%d got %zu bytes (seq %d), want %zu: overtaken?",
            phase, i, st->bytes, (int)seq, n);
  MP_EXPECT(st->source == src && st->tag == want_tag, "phase %s #%d: source %d tag %d, want %d %d",
            phase, i, st->source, st->tag, src, want_tag);
  if (st->bytes == n) {
    unsigned char *w = (unsigned char *)mp_alloc(n);
    make(w, n, src, mp_rank, i);
    MP_EXPECT(memcmp(w, b, n) == 0, "phase %s #%d: payload differs", phase, i);
    free(w);
  }
}

/* Sends a token to dst and waits for one from src (isend: dst may be this rank). */
static void token(int dst, int src) {
  char out = 't', in = 0;
  rrt_request_t req;
  MP_CALL(rrt_isend(&out, 1, RRT_CHAR, dst, TAG_READY, RRT_COMM_WORLD, &req));
  MP_CALL(rrt_recv(&in, 1, RRT_CHAR, src, TAG_READY, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
  MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  int count = (int)mp_arg_size(argc, argv, "--count", 24);
  int to = (mp_rank + 1) % mp_size, from = (mp_rank + mp_size - 1) % mp_size;
  size_t maxn = 0;
  for (int i = 0; i < count; ++i) maxn = msg_size(t, i) > maxn ? msg_size(t, i) : maxn;

  unsigned char **sb = (unsigned char **)mp_alloc(sizeof(void *) * (size_t)count);
  unsigned char **rb = (unsigned char **)mp_alloc(sizeof(void *) * (size_t)count);
  rrt_request_t *sreq = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)count);
  rrt_request_t *rreq = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)count);
  rrt_status_t *st = (rrt_status_t *)mp_alloc(sizeof(rrt_status_t) * (size_t)count);
  for (int i = 0; i < count; ++i) {
    sb[i] = (unsigned char *)mp_alloc(msg_size(t, i));
    make(sb[i], msg_size(t, i), mp_rank, to, i);
    rb[i] = (unsigned char *)mp_alloc(maxn);
  }

  /* A: post every receive (same source and tag, buffers big enough for any), then let the
   * sender go. */
  for (int i = 0; i < count; ++i)
    MP_CALL(rrt_irecv(rb[i], maxn, RRT_BYTE, from, TAG_DATA, RRT_COMM_WORLD, &rreq[i]));
  token(from, to);
  for (int i = 0; i < count; ++i)
    MP_CALL(rrt_isend(sb[i], msg_size(t, i), RRT_BYTE, to, TAG_DATA, RRT_COMM_WORLD, &sreq[i]));
  MP_CALL(rrt_waitall((size_t)count, rreq, st));
  MP_CALL(rrt_waitall((size_t)count, sreq, RRT_STATUSES_IGNORE));
  for (int i = 0; i < count; ++i) check(rb[i], &st[i], t, from, i, TAG_DATA, "A (posted)");

  /* B: all sends first, then a token on another tag; the receiver takes the token, so the
   * data is (at least partly) unexpected, and receives in order. */
  for (int i = 0; i < count; ++i)
    MP_CALL(rrt_isend(sb[i], msg_size(t, i), RRT_BYTE, to, TAG_DATA, RRT_COMM_WORLD, &sreq[i]));
  token(to, from);
  for (int i = 0; i < count; ++i) {
    MP_CALL(rrt_recv(rb[i], maxn, RRT_BYTE, from, TAG_DATA, RRT_COMM_WORLD, &st[i]));
    check(rb[i], &st[i], t, from, i, TAG_DATA, "B (unexpected)");
  }
  MP_CALL(rrt_waitall((size_t)count, sreq, RRT_STATUSES_IGNORE));

  /* C: tags 10 + i % 3, received with ANY_TAG on a dup (world carries the suite's own
   * messages, which a wildcard receive there could take). */
  rrt_comm_t dup;
  MP_CALL(rrt_comm_dup(RRT_COMM_WORLD, &dup));
  for (int i = 0; i < count; ++i)
    MP_CALL(rrt_isend(sb[i], msg_size(t, i), RRT_BYTE, to, 10 + i % 3, dup, &sreq[i]));
  for (int i = 0; i < count; ++i) {
    MP_CALL(rrt_recv(rb[i], maxn, RRT_BYTE, from, RRT_ANY_TAG, dup, &st[i]));
    check(rb[i], &st[i], t, from, i, 10 + i % 3, "C (ANY_TAG)");
  }
  MP_CALL(rrt_waitall((size_t)count, sreq, RRT_STATUSES_IGNORE));
  MP_CALL(rrt_comm_free(&dup));
  MP_EXPECT(dup == RRT_COMM_NULL, "comm_free did not set the handle to RRT_COMM_NULL");

  for (int i = 0; i < count; ++i) {
    free(sb[i]);
    free(rb[i]);
  }
  free(sb); free(rb); free(sreq); free(rreq); free(st);
  return mp_finish("p2p_order");
}
