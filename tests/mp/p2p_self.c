/*
 * Self-sends: every rank sends to itself, on RRT_COMM_WORLD (to its own rank) and on
 * RRT_COMM_SELF (to rank 0), for every size class, with the receive posted before and after
 * the send, plus an issend to self (it may only complete once the receive is posted) and a
 * probe of a message sent to self. Blocking send to self is not used: like MPI, rrt need
 * not buffer it.
 */
#include "mp_util.h"

static void exchange(rrt_comm_t comm, int self, const char *cname, size_t n, int tag, int recv_first,
                     unsigned char *sbuf, unsigned char *rbuf) {
  rrt_request_t sreq, rreq;
  rrt_status_t st;
  uint64_t seed = mp_seed(mp_rank, mp_rank, tag, n ^ (uint64_t)comm << 32);
  mp_fill(sbuf, n, seed);
  memset(rbuf, 0, n);
  if (recv_first) {
    MP_CALL(rrt_irecv(rbuf, n, RRT_BYTE, self, tag, comm, &rreq));
    MP_CALL(rrt_isend(sbuf, n, RRT_BYTE, self, tag, comm, &sreq));
    MP_CALL(rrt_wait(&rreq, &st));
    MP_CALL(rrt_wait(&sreq, RRT_STATUS_IGNORE));
  } else {
    MP_CALL(rrt_isend(sbuf, n, RRT_BYTE, self, tag, comm, &sreq));
    MP_CALL(rrt_recv(rbuf, n, RRT_BYTE, self, tag, comm, &st));
    MP_CALL(rrt_wait(&sreq, RRT_STATUS_IGNORE));
  }
  MP_EXPECT(st.source == self && st.tag == tag && st.bytes == n && st.error == RRT_SUCCESS,
            "%s self %zu bytes: status source %d tag %d bytes %zu error %d", cname, n, st.source,
            st.tag, st.bytes, st.error);
  MP_EXPECT_PATTERN(rbuf, n, seed, "%s self %s, %zu bytes", cname,
                    recv_first ? "recv-first" : "send-first", n);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  size_t max = t + 1 > (1u << 20) ? t + 1 : (1u << 20);
  size_t sizes[MP_MAX_CLASSES];
  int nsizes = mp_size_classes(t, max, sizes);
  unsigned char *sbuf = (unsigned char *)mp_alloc(max), *rbuf = (unsigned char *)mp_alloc(max);

  int self_size = 0, self_rank = -1;
  MP_CALL(rrt_comm_size(RRT_COMM_SELF, &self_size));
  MP_CALL(rrt_comm_rank(RRT_COMM_SELF, &self_rank));
  MP_EXPECT(self_size == 1 && self_rank == 0, "RRT_COMM_SELF: size %d rank %d", self_size, self_rank);

  for (int i = 0; i < nsizes; ++i)
    for (int rf = 0; rf < 2; ++rf) {
      exchange(RRT_COMM_WORLD, mp_rank, "world", sizes[i], 10 + i, rf, sbuf, rbuf);
      exchange(RRT_COMM_SELF, 0, "comm_self", sizes[i], 10 + i, rf, sbuf, rbuf);
    }

  /* Synchronous send to self: incomplete while no receive is posted, done after. */
  for (int i = 0; i < nsizes; ++i) {
    size_t n = sizes[i];
    rrt_request_t sreq;
    int flag = 1;
    uint64_t seed = mp_seed(mp_rank, mp_rank, 77, n);
    mp_fill(sbuf, n, seed);
    MP_CALL(rrt_issend(sbuf, n, RRT_BYTE, mp_rank, 77, RRT_COMM_WORLD, &sreq));
    for (int k = 0; k < 100 && flag; ++k) MP_CALL(rrt_test(&sreq, &flag, RRT_STATUS_IGNORE));
    MP_EXPECT(!flag, "issend to self of %zu bytes completed before any receive was posted", n);
    MP_CALL(rrt_recv(rbuf, n, RRT_BYTE, mp_rank, 77, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    if (!flag) MP_CALL(rrt_wait(&sreq, RRT_STATUS_IGNORE));
    MP_EXPECT_PATTERN(rbuf, n, seed, "issend to self, %zu bytes", n);
  }

  /* Probe of a message sent to self sees it without removing it. */
  {
    rrt_request_t sreq;
    rrt_status_t st;
    int flag = 0;
    size_t n = t + 1;
    uint64_t seed = mp_seed(mp_rank, mp_rank, 88, n);
    mp_fill(sbuf, n, seed);
    MP_CALL(rrt_isend(sbuf, n, RRT_BYTE, mp_rank, 88, RRT_COMM_WORLD, &sreq));
    MP_CALL(rrt_probe(RRT_ANY_SOURCE, 88, RRT_COMM_WORLD, &st));
    MP_EXPECT(st.source == mp_rank && st.tag == 88 && st.bytes == n,
              "probe of self message: source %d tag %d bytes %zu", st.source, st.tag, st.bytes);
    MP_CALL(rrt_iprobe(mp_rank, 88, RRT_COMM_WORLD, &flag, &st));
    MP_EXPECT(flag, "iprobe after probe no longer sees the self message");
    MP_CALL(rrt_recv(rbuf, n, RRT_BYTE, mp_rank, 88, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    MP_CALL(rrt_wait(&sreq, RRT_STATUS_IGNORE));
    MP_EXPECT_PATTERN(rbuf, n, seed, "probed self message");
  }

  free(sbuf);
  free(rbuf);
  return mp_finish("p2p_self");
}
