/*
 * RRT_ANY_TAG (and ANY_SOURCE) receives match user tags only, never the internal negative tags
 * that collectives use on the same communicator. Every rank posts irecv(ANY_SOURCE, ANY_TAG)
 * on world, then all run a barrier, a bcast and an allreduce there (uses the collectives, so
 * this test fails too while they are missing); only then does each rank send the user message
 * its successor waits for. The pending receive must deliver exactly that message, with a tag
 * >= 0, and the collectives must have produced their right results.
 */
#include "mp_util.h"

/* Weak: this program links (and reports SKIP) while librrt has no collectives yet, so it
 * never breaks the build of `make check`. */
#pragma weak rrt_barrier
#pragma weak rrt_bcast
#pragma weak rrt_allreduce

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  if (!rrt_barrier || !rrt_bcast || !rrt_allreduce) {
    if (mp_rank == 0) printf("SKIP p2p_anytag_internal: librrt has no rrt_barrier/rrt_bcast/rrt_allreduce\n");
    rrt_finalize();
    return 0;
  }
  int to = (mp_rank + 1) % mp_size, from = (mp_rank + mp_size - 1) % mp_size;
  int64_t in = -1, out = 7000 + mp_rank;
  rrt_request_t rreq, sreq;
  rrt_status_t st;
  int flag = 1;

  MP_CALL(rrt_irecv(&in, 1, RRT_INT64, RRT_ANY_SOURCE, RRT_ANY_TAG, RRT_COMM_WORLD, &rreq));
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  int64_t v = mp_rank == 0 ? 4242 : 0;
  MP_CALL(rrt_bcast(&v, 1, RRT_INT64, 0, RRT_COMM_WORLD));
  MP_EXPECT(v == 4242, "bcast under a pending ANY_TAG receive gave %lld", (long long)v);
  int64_t one = 1, sum = 0;
  MP_CALL(rrt_allreduce(&one, &sum, 1, RRT_INT64, RRT_SUM, RRT_COMM_WORLD));
  MP_EXPECT(sum == mp_size, "allreduce under a pending ANY_TAG receive gave %lld", (long long)sum);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  /* Nobody has sent a user message yet: the wildcard receive must still be pending. */
  MP_CALL(rrt_test(&rreq, &flag, &st));
  MP_EXPECT(!flag, "ANY_TAG receive completed during collectives: source %d tag %d bytes %zu",
            st.source, st.tag, st.bytes);
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));

  MP_CALL(rrt_isend(&out, 1, RRT_INT64, to, 77, RRT_COMM_WORLD, &sreq));
  if (!flag) MP_CALL(rrt_wait(&rreq, &st));
  MP_CALL(rrt_wait(&sreq, RRT_STATUS_IGNORE));
  MP_EXPECT(st.tag == 77 && st.source == from && in == 7000 + from,
            "ANY_TAG receive got tag %d from %d value %lld, want 77 from %d value %d", st.tag,
            st.source, (long long)in, from, 7000 + from);
  /* The user message must be in before anyone's bookkeeping message can be sent. */
  MP_CALL(rrt_barrier(RRT_COMM_WORLD));
  return mp_finish("p2p_anytag_internal");
}
