/*
 * probe / iprobe: they report source, tag and the full byte count (also of rendezvous-size
 * messages) and never remove the message. Every rank sends three messages to every other
 * rank: tag 11 (small), tag 12 (above the eager limit), tag 13 (0 bytes), in that order.
 * Each receiver then
 *   - iprobes a tag nobody sends: flag must be 0;
 *   - probes (source, 12) twice and iprobes it: same answer each time (no removal);
 *   - probes (source, ANY_TAG): must see tag 11, the first sent (non-overtaking);
 *   - probes (ANY_SOURCE, 13) and receives exactly from the reported source;
 *   - receives all three, verifying data, then iprobe (source, 11) must be 0.
 */
#include "mp_util.h"

static size_t size_of(int tag, size_t t, int src) {
  if (tag == 11) return 100 + (size_t)src;
  if (tag == 12) return t + 1 + (size_t)src;
  return 0;
}

static void expect_status(const rrt_status_t *st, int src, int tag, size_t bytes, const char *what) {
  MP_EXPECT(st->source == src && st->tag == tag && st->bytes == bytes,
            "%s: status source %d tag %d bytes %zu, want %d %d %zu", what, st->source, st->tag,
            st->bytes, src, tag, bytes);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  int npeers = mp_size - 1;
  rrt_request_t *sreq = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)(3 * mp_size));
  unsigned char **sb = (unsigned char **)mp_alloc(sizeof(void *) * (size_t)(3 * mp_size));
  int ns = 0;

  for (int d = 1; d <= npeers; ++d) {
    int dst = (mp_rank + d) % mp_size;
    for (int tag = 11; tag <= 13; ++tag) {
      size_t n = size_of(tag, t, mp_rank);
      sb[ns] = (unsigned char *)mp_alloc(n);
      mp_fill(sb[ns], n, mp_seed(mp_rank, dst, tag, n));
      MP_CALL(rrt_isend(sb[ns], n, RRT_BYTE, dst, tag, RRT_COMM_WORLD, &sreq[ns]));
      ++ns;
    }
  }

  int flag = 1;
  rrt_status_t st;
  MP_CALL(rrt_iprobe(RRT_ANY_SOURCE, 99, RRT_COMM_WORLD, &flag, &st));
  MP_EXPECT(!flag, "iprobe found a message with tag 99, which nobody sent");

  /* Probe each source for tag 12 without consuming it. */
  for (int d = 1; d <= npeers; ++d) {
    int src = (mp_rank - d + mp_size) % mp_size;
    size_t n12 = size_of(12, t, src);
    MP_CALL(rrt_probe(src, 12, RRT_COMM_WORLD, &st));
    expect_status(&st, src, 12, n12, "probe(src, 12)");
    MP_CALL(rrt_probe(src, 12, RRT_COMM_WORLD, &st));
    expect_status(&st, src, 12, n12, "second probe(src, 12)");
    flag = 0;
    MP_CALL(rrt_iprobe(src, 12, RRT_COMM_WORLD, &flag, &st));
    MP_EXPECT(flag, "iprobe(src %d, 12) after probe found nothing: probe removed the message", src);
    if (flag) expect_status(&st, src, 12, n12, "iprobe(src, 12)");
    MP_CALL(rrt_probe(src, RRT_ANY_TAG, RRT_COMM_WORLD, &st));
    expect_status(&st, src, 11, size_of(11, t, src), "probe(src, ANY_TAG) (first sent is tag 11)");
    flag = 0;
    MP_CALL(rrt_iprobe(src, 12, RRT_COMM_WORLD, &flag, RRT_STATUS_IGNORE));
    MP_EXPECT(flag, "iprobe with RRT_STATUS_IGNORE found nothing");
  }

  /* Receive everything: tag 13 via ANY_SOURCE probe first, then 12, then 11. */
  for (int k = 0; k < npeers; ++k) {
    MP_CALL(rrt_probe(RRT_ANY_SOURCE, 13, RRT_COMM_WORLD, &st));
    int src = st.source;
    if (src < 0 || src >= mp_size || src == mp_rank) {
      MP_EXPECT(0, "probe(ANY_SOURCE, 13) reported source %d", src);
      break;
    }
    expect_status(&st, src, 13, 0, "probe(ANY_SOURCE, 13)");
    rrt_status_t rs;
    MP_CALL(rrt_recv(NULL, 0, RRT_BYTE, src, 13, RRT_COMM_WORLD, &rs));
    expect_status(&rs, src, 13, 0, "recv of probed tag 13");
  }
  for (int d = 1; d <= npeers; ++d) {
    int src = (mp_rank - d + mp_size) % mp_size;
    for (int tag = 12; tag >= 11; --tag) {
      size_t n = size_of(tag, t, src);
      unsigned char *rb = (unsigned char *)mp_alloc(n);
      MP_CALL(rrt_recv(rb, n, RRT_BYTE, src, tag, RRT_COMM_WORLD, &st));
      expect_status(&st, src, tag, n, "recv after probes");
      MP_EXPECT_PATTERN(rb, n, mp_seed(src, mp_rank, tag, n), "tag %d from %d after probes", tag, src);
      free(rb);
    }
    MP_CALL(rrt_iprobe(src, 11, RRT_COMM_WORLD, &flag, &st));
    MP_EXPECT(!flag, "iprobe(src %d, 11) still finds a message after it was received", src);
  }
  MP_CALL(rrt_waitall((size_t)ns, sreq, RRT_STATUSES_IGNORE));
  for (int i = 0; i < ns; ++i) free(sb[i]);
  free(sb);
  free(sreq);
  return mp_finish("p2p_probe");
}
