/*
 * rrt_sendrecv and RRT_PROC_NULL:
 *   - a periodic ring shift with sendrecv, every size class (1 rank: to itself);
 *   - a non-periodic shift: rank 0 receives from RRT_PROC_NULL and the last rank sends to it;
 *     a receive from RRT_PROC_NULL completes at once with source RRT_PROC_NULL, tag
 *     RRT_ANY_TAG, 0 bytes, and leaves the buffer alone (MPI semantics);
 *   - send, isend, recv, irecv, probe, iprobe, ssend with RRT_PROC_NULL complete at once.
 */
#include "mp_util.h"

static void expect_proc_null_status(const rrt_status_t *st, const char *what) {
  MP_EXPECT(st->source == RRT_PROC_NULL && st->tag == RRT_ANY_TAG && st->bytes == 0 &&
                st->error == RRT_SUCCESS,
            "%s: status source %d tag %d bytes %zu error %d, want PROC_NULL/ANY_TAG/0/0", what,
            st->source, st->tag, st->bytes, st->error);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  size_t sizes[MP_MAX_CLASSES];
  int nsizes = mp_size_classes(t, t + 1 > (1u << 20) ? t + 1 : (1u << 20), sizes);
  size_t max = sizes[nsizes - 1];
  unsigned char *sb = (unsigned char *)mp_alloc(max), *rb = (unsigned char *)mp_alloc(max);
  int to = (mp_rank + 1) % mp_size, from = (mp_rank + mp_size - 1) % mp_size;

  for (int si = 0; si < nsizes; ++si) {
    size_t n = sizes[si];
    rrt_status_t st;
    mp_fill(sb, n, mp_seed(mp_rank, to, si, n));
    memset(rb, 0, n);
    MP_CALL(rrt_sendrecv(sb, n, RRT_BYTE, to, si, rb, n, RRT_BYTE, from, si, RRT_COMM_WORLD, &st));
    MP_EXPECT(st.source == from && st.tag == si && st.bytes == n,
              "sendrecv ring %zu bytes: status source %d tag %d bytes %zu", n, st.source, st.tag, st.bytes);
    MP_EXPECT_PATTERN(rb, n, mp_seed(from, mp_rank, si, n), "sendrecv ring from %d", from);

    /* Non-periodic shift: the ends talk to RRT_PROC_NULL. */
    int up = mp_rank + 1 < mp_size ? mp_rank + 1 : RRT_PROC_NULL;
    int down = mp_rank > 0 ? mp_rank - 1 : RRT_PROC_NULL;
    mp_fill(sb, n, mp_seed(mp_rank, up, 100 + si, n));
    memset(rb, 0xEE, n);
    MP_CALL(rrt_sendrecv(sb, n, RRT_BYTE, up, 100 + si, rb, n, RRT_BYTE, down, 100 + si,
                         RRT_COMM_WORLD, &st));
    if (down == RRT_PROC_NULL) {
      expect_proc_null_status(&st, "sendrecv from PROC_NULL");
      int untouched = 1;
      for (size_t i = 0; i < n; ++i) untouched &= rb[i] == 0xEE;
      MP_EXPECT(untouched, "receive from PROC_NULL wrote the buffer");
    } else {
      MP_EXPECT(st.source == down && st.bytes == n, "shift %zu bytes: source %d bytes %zu", n,
                st.source, st.bytes);
      MP_EXPECT_PATTERN(rb, n, mp_seed(down, mp_rank, 100 + si, n), "shift from %d", down);
    }
  }

  /* Every point-to-point call accepts RRT_PROC_NULL and completes at once. */
  {
    rrt_request_t req;
    rrt_status_t st;
    int flag = 0;
    MP_CALL(rrt_send(sb, 10, RRT_BYTE, RRT_PROC_NULL, 1, RRT_COMM_WORLD));
    MP_CALL(rrt_ssend(sb, max, RRT_BYTE, RRT_PROC_NULL, 1, RRT_COMM_WORLD));
    MP_CALL(rrt_recv(rb, 10, RRT_BYTE, RRT_PROC_NULL, 1, RRT_COMM_WORLD, &st));
    expect_proc_null_status(&st, "recv from PROC_NULL");
    MP_CALL(rrt_isend(sb, max, RRT_BYTE, RRT_PROC_NULL, 1, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_CALL(rrt_issend(sb, 10, RRT_BYTE, RRT_PROC_NULL, 1, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_test(&req, &flag, RRT_STATUS_IGNORE));
    MP_EXPECT(flag, "issend to PROC_NULL did not complete at the first test");
    if (!flag) MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_CALL(rrt_irecv(rb, 10, RRT_BYTE, RRT_PROC_NULL, RRT_ANY_TAG, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_wait(&req, &st));
    expect_proc_null_status(&st, "irecv from PROC_NULL");
    MP_CALL(rrt_probe(RRT_PROC_NULL, 1, RRT_COMM_WORLD, &st));
    expect_proc_null_status(&st, "probe of PROC_NULL");
    flag = 0;
    MP_CALL(rrt_iprobe(RRT_PROC_NULL, 1, RRT_COMM_WORLD, &flag, &st));
    MP_EXPECT(flag, "iprobe of PROC_NULL: flag 0");
    expect_proc_null_status(&st, "iprobe of PROC_NULL");
  }
  free(sb);
  free(rb);
  return mp_finish("p2p_sendrecv");
}
