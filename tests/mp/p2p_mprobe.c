/*
 * Matched probe (rrt_mprobe / rrt_improbe + rrt_mrecv / rrt_imrecv). Checks:
 *   - every other rank sends rank 0 messages of sizes around the eager limit (eager, eager with
 *     fragments, rendezvous); rank 0 takes each with a wildcard matched probe and, before
 *     receiving it, posts a wildcard receive: that receive must get a later message, never the
 *     probed one (which only the matched receive gets, whole and from the probed source);
 *   - rrt_improbe with nothing there: flag 0, message RRT_MESSAGE_NULL;
 *   - RRT_PROC_NULL: RRT_MESSAGE_NO_PROC, whose receive completes with source RRT_PROC_NULL;
 *   - a probed message outlives rrt_comm_free of its communicator and is still received;
 *   - truncation (the receive buffer too small: RRT_ERR_TRUNCATE in the status), a used or null
 *     message handle (RRT_ERR_ARG).
 * Any number of ranks >= 2.
 */
#include "mp_util.h"

#define TAG 7

static uint64_t seed_of(int src, int k, size_t size) { return mp_seed(src, 0, TAG, k * 1000003u + size); }

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t sizes[8] = {0, 1, 100};
  int nsizes = mp_add_around(sizes, 3, mp_eager_limit());
  sizes[nsizes++] = 1 << 20;
  size_t maxb = 1 << 20;
  unsigned char *a = malloc(maxb), *b = malloc(maxb);
  rrt_comm_t dup;
  MP_CALL(rrt_comm_dup(RRT_COMM_WORLD, &dup));

  if (mp_rank != 0) {
    for (int k = 0; k < nsizes; ++k) {
      mp_fill(a, sizes[k], seed_of(mp_rank, k, sizes[k]));
      MP_CALL(rrt_send(a, sizes[k], RRT_BYTE, 0, TAG, dup));
    }
  } else {
    int total = (mp_size - 1) * nsizes, got = 0;
    int next[64] = {0};  /* per source: index of the next message expected */
    while (got < total) {
      rrt_message_t msg = RRT_MESSAGE_NULL;
      rrt_status_t ps;
      MP_CALL(rrt_mprobe(RRT_ANY_SOURCE, TAG, dup, &msg, &ps));
      MP_EXPECT(msg != RRT_MESSAGE_NULL, "mprobe returned no message");
      int src = ps.source, k = next[src];
      MP_EXPECT(ps.bytes == sizes[k], "probe from %d: %zu bytes, expected %zu", src, ps.bytes,
                sizes[k]);
      /* A wildcard receive posted now must not take the probed message. */
      rrt_request_t other = RRT_REQUEST_NULL;
      rrt_status_t os;
      if (got + 1 < total) MP_CALL(rrt_irecv(b, maxb, RRT_BYTE, RRT_ANY_SOURCE, TAG, dup, &other));
      rrt_status_t rs;
      MP_CALL(rrt_mrecv(a, maxb, RRT_BYTE, &msg, &rs));
      MP_EXPECT(msg == RRT_MESSAGE_NULL, "mrecv left the message handle");
      MP_EXPECT(rs.source == src && rs.bytes == sizes[k], "mrecv: source %d bytes %zu", rs.source,
                rs.bytes);
      MP_EXPECT_PATTERN(a, rs.bytes, seed_of(src, k, sizes[k]), "probed message %d from %d", k, src);
      next[src]++;
      got++;
      if (other != RRT_REQUEST_NULL) {
        MP_CALL(rrt_wait(&other, &os));
        int k2 = next[os.source];
        MP_EXPECT(os.bytes == sizes[k2], "wildcard receive from %d: %zu bytes, expected %zu",
                  os.source, os.bytes, sizes[k2]);
        MP_EXPECT_PATTERN(b, os.bytes, seed_of(os.source, k2, sizes[k2]), "message %d from %d", k2,
                          os.source);
        next[os.source]++;
        got++;
      }
    }
  }

  /* Nothing there; PROC_NULL; errors. */
  int flag = 1;
  rrt_message_t msg = (rrt_message_t)8;
  MP_CALL(rrt_improbe(RRT_ANY_SOURCE, TAG + 1, dup, &flag, &msg, NULL));
  MP_EXPECT(flag == 0 && msg == RRT_MESSAGE_NULL, "improbe found a message that was never sent");
  MP_CALL(rrt_improbe(RRT_PROC_NULL, TAG, dup, &flag, &msg, NULL));
  MP_EXPECT(flag == 1 && msg == RRT_MESSAGE_NO_PROC, "improbe of RRT_PROC_NULL");
  rrt_status_t st;
  MP_CALL(rrt_mrecv(a, 4, RRT_BYTE, &msg, &st));
  MP_EXPECT(st.source == RRT_PROC_NULL && st.bytes == 0, "receive of RRT_MESSAGE_NO_PROC");
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_mrecv(a, 4, RRT_BYTE, &msg, &st));  /* now RRT_MESSAGE_NULL */

  /* Truncation, and a message probed on a communicator freed before its receive. Its own tag:
   * rank 0 may still have a wildcard receive for TAG posted when a sender gets here. */
  int right = (mp_rank + 1) % mp_size, left = (mp_rank + mp_size - 1) % mp_size;
  mp_fill(a, 64, seed_of(mp_rank, 99, 64));
  rrt_request_t sreq;
  MP_CALL(rrt_isend(a, 64, RRT_BYTE, right, TAG + 2, dup, &sreq));
  MP_CALL(rrt_mprobe(left, TAG + 2, dup, &msg, &st));
  MP_CALL(rrt_comm_free(&dup));  /* the probed message holds the communicator */
  MP_EXPECT_RC(RRT_ERR_TRUNCATE, rrt_mrecv(b, 16, RRT_BYTE, &msg, &st));
  MP_EXPECT(st.error == RRT_ERR_TRUNCATE, "truncated mrecv: status error %d", st.error);
  MP_EXPECT_PATTERN(b, 16, seed_of(left, 99, 64), "the first 16 bytes of a truncated message");
  MP_CALL(rrt_wait(&sreq, NULL));  /* a rendezvous send completes once the mrecv matched it */
  free(a);
  free(b);
  mp_finish("p2p_mprobe");
  return 0;
}
