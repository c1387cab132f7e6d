/*
 * Synchronous-send semantics without timing: rank 0 issends to rank r, which will not post the
 * matching receive until rank 0 sends it a "go" message. Until then the issend cannot have
 * been matched, so rrt_test must keep reporting it incomplete however often it is polled; after
 * "go" it must complete and the data must be right. Covers every size class (eager sizes are
 * the interesting ones: their data can be delivered before the match). Also a blocking
 * rrt_ssend against a receive that is already posted, and a standard send for contrast.
 */
#include "mp_util.h"

#define TAG_DATA 5
#define TAG_GO 6
#define POLLS 2000

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  size_t sizes[MP_MAX_CLASSES];
  int nsizes = mp_size_classes(t, t + 1 > (1u << 20) ? t + 1 : (1u << 20), sizes);
  size_t max = sizes[nsizes - 1];
  unsigned char *buf = (unsigned char *)mp_alloc(max);
  char go = 'g';

  for (int peer = 1; peer < mp_size; ++peer)
    for (int si = 0; si < nsizes; ++si) {
      size_t n = sizes[si];
      uint64_t seed = mp_seed(0, peer, TAG_DATA, n);
      if (mp_rank == 0) {
        rrt_request_t req;
        int flag = 0;
        mp_fill(buf, n, seed);
        MP_CALL(rrt_issend(buf, n, RRT_BYTE, peer, TAG_DATA, RRT_COMM_WORLD, &req));
        for (int k = 0; k < POLLS && !flag; ++k) MP_CALL(rrt_test(&req, &flag, RRT_STATUS_IGNORE));
        MP_EXPECT(!flag, "issend of %zu bytes to %d completed before the receiver posted a receive",
                  n, peer);
        MP_CALL(rrt_send(&go, 1, RRT_CHAR, peer, TAG_GO, RRT_COMM_WORLD));
        if (!flag) MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
        MP_EXPECT(req == RRT_REQUEST_NULL, "wait left the issend request non-NULL");
      } else if (mp_rank == peer) {
        rrt_status_t st;
        char g = 0;
        MP_CALL(rrt_recv(&g, 1, RRT_CHAR, 0, TAG_GO, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
        memset(buf, 0, n);
        MP_CALL(rrt_recv(buf, n, RRT_BYTE, 0, TAG_DATA, RRT_COMM_WORLD, &st));
        MP_EXPECT(st.bytes == n && st.source == 0 && st.tag == TAG_DATA,
                  "ssend data %zu bytes: status bytes %zu source %d tag %d", n, st.bytes,
                  st.source, st.tag);
        MP_EXPECT_PATTERN(buf, n, seed, "issend data from 0");
      }
    }

  /* Blocking ssend, receive already posted (peer r sends to r-1, r-1 receives from r). */
  if (mp_size > 1) {
    for (int si = 0; si < nsizes; ++si) {
      size_t n = sizes[si];
      int to = (mp_rank + mp_size - 1) % mp_size, from = (mp_rank + 1) % mp_size;
      unsigned char *rb = (unsigned char *)mp_alloc(n);
      rrt_request_t req;
      rrt_status_t st;
      MP_CALL(rrt_irecv(rb, n, RRT_BYTE, from, 7, RRT_COMM_WORLD, &req));
      mp_fill(buf, n, mp_seed(mp_rank, to, 7, n));
      /* Every rank ssends while its own receive is posted: no cycle can deadlock. */
      MP_CALL(rrt_ssend(buf, n, RRT_BYTE, to, 7, RRT_COMM_WORLD));
      MP_CALL(rrt_wait(&req, &st));
      MP_EXPECT(st.bytes == n, "ssend ring: %zu bytes, want %zu", st.bytes, n);
      MP_EXPECT_PATTERN(rb, n, mp_seed(from, mp_rank, 7, n), "ssend ring from %d", from);
      free(rb);
    }
  }
  free(buf);
  return mp_finish("p2p_ssend");
}
