/*
 * Cancel and request_free, rank 0 <-> rank 1 (other ranks only finish):
 *   1. rank 1 posts irecv(0, tag 5) (and one with ANY_SOURCE), cancels it, waits: status
 *      says cancelled; then rank 0 sends tag 5 and a fresh receive gets it (the cancelled
 *      receive must not have consumed it);
 *   2. a receive that matched at posting (the message was already there, found by probe) is
 *      not cancelled: wait reports cancelled == 0 and the data; eager and rendezvous sizes;
 *   3. rank 0 isends (eager and rendezvous sizes) and request_free()s them: the handle becomes
 *      NULL, the messages still arrive intact; rank 0 frees its buffers only after rank 1 acks.
 */
#include "mp_util.h"

#define TAG_GO 2
#define TAG_ACK 3

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  size_t sizes[2] = {24, t + 1};
  char c = 'x';

  if (mp_size >= 2 && mp_rank <= 1) {
    /* 1: cancel a posted receive */
    for (int wild = 0; wild < 2; ++wild) {
      int tag = 5 + wild;
      int64_t v = -1, want = 4242 + wild;
      if (mp_rank == 1) {
        rrt_request_t req;
        rrt_status_t st;
        MP_CALL(rrt_irecv(&v, 1, RRT_INT64, wild ? RRT_ANY_SOURCE : 0, tag, RRT_COMM_WORLD, &req));
        MP_CALL(rrt_cancel(&req));
        MP_CALL(rrt_wait(&req, &st));
        MP_EXPECT(st.cancelled, "wait after cancel of an unmatched %s receive: cancelled == 0",
                  wild ? "ANY_SOURCE" : "");
        MP_EXPECT(req == RRT_REQUEST_NULL, "wait after cancel left the handle non-NULL");
        MP_EXPECT(v == -1, "cancelled receive wrote its buffer");
        MP_CALL(rrt_send(&c, 1, RRT_CHAR, 0, TAG_GO, RRT_COMM_WORLD));
        MP_CALL(rrt_recv(&v, 1, RRT_INT64, 0, tag, RRT_COMM_WORLD, &st));
        MP_EXPECT(v == want && !st.cancelled, "receive after cancel got %lld (cancelled %d), want %lld",
                  (long long)v, st.cancelled, (long long)want);
      } else {
        MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 1, TAG_GO, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
        MP_CALL(rrt_send(&want, 1, RRT_INT64, 1, tag, RRT_COMM_WORLD));
      }
    }

    /* 2: cancel of an already matched receive has no effect */
    for (int si = 0; si < 2; ++si) {
      size_t n = sizes[si];
      unsigned char *b = (unsigned char *)mp_alloc(n);
      uint64_t seed = mp_seed(0, 1, 20 + si, n);
      if (mp_rank == 0) {
        mp_fill(b, n, seed);
        MP_CALL(rrt_send(b, n, RRT_BYTE, 1, 20 + si, RRT_COMM_WORLD));
      } else {
        rrt_request_t req;
        rrt_status_t st;
        MP_CALL(rrt_probe(0, 20 + si, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
        MP_CALL(rrt_irecv(b, n, RRT_BYTE, 0, 20 + si, RRT_COMM_WORLD, &req));
        MP_CALL(rrt_cancel(&req));
        MP_CALL(rrt_wait(&req, &st));
        MP_EXPECT(!st.cancelled, "%zu bytes: cancel succeeded on a receive that had matched", n);
        MP_EXPECT(st.bytes == n && st.source == 0, "%zu bytes: matched-then-cancel status bytes %zu source %d",
                  n, st.bytes, st.source);
        if (!st.cancelled) MP_EXPECT_PATTERN(b, n, seed, "matched receive after cancel");
      }
      free(b);
    }

    /* 3: request_free of sends */
    {
      unsigned char *b[2];
      for (int si = 0; si < 2; ++si) {
        size_t n = sizes[si];
        b[si] = (unsigned char *)mp_alloc(n);
        uint64_t seed = mp_seed(0, 1, 30 + si, n);
        if (mp_rank == 0) {
          rrt_request_t req;
          mp_fill(b[si], n, seed);
          MP_CALL(rrt_isend(b[si], n, RRT_BYTE, 1, 30 + si, RRT_COMM_WORLD, &req));
          MP_CALL(rrt_request_free(&req));
          MP_EXPECT(req == RRT_REQUEST_NULL, "request_free left the handle non-NULL");
        } else {
          MP_CALL(rrt_recv(b[si], n, RRT_BYTE, 0, 30 + si, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
          MP_EXPECT_PATTERN(b[si], n, seed, "message of a freed send request (%zu bytes)", n);
        }
      }
      if (mp_rank == 1) MP_CALL(rrt_send(&c, 1, RRT_CHAR, 0, TAG_ACK, RRT_COMM_WORLD));
      else MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 1, TAG_ACK, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
      free(b[0]);
      free(b[1]);
    }
  }
  return mp_finish("p2p_cancel");
}
