/*
 * ANY_SOURCE storms. Phase 1: every rank but 0 fires --count messages at rank 0, which
 * takes them all with RRT_ANY_SOURCE (a fixed tag). Phase 2: everybody sends to everybody and
 * receives with ANY_SOURCE and ANY_TAG, on a duplicate of world (so the wildcard receive cannot
 * take the suite's own bookkeeping messages on world, and dup isolation is exercised). Sizes mix eager and rendezvous. Each message carries
 * (source, sequence number); checks: status.source/tag/bytes agree with the payload, the
 * sequence from each source arrives in order (non-overtaking), nothing is lost or duplicated.
 */
#include "mp_util.h"

/* Size of message seq from src: mostly small, every 8th one just above the eager limit. */
static size_t msg_size(size_t t, int src, int seq) {
  if (seq % 8 == 7) return t + 1 + (size_t)(src * 13 + seq) % 512;
  return 16 + (size_t)(src * 7 + seq) % 200;
}

static int msg_tag(int phase, int seq) { return phase == 1 ? 42 : 100 + seq % 5; }

/* Payload: [src, seq] header, then the pattern. */
static void make_msg(unsigned char *b, size_t n, int src, int dst, int seq, int phase) {
  int32_t hdr[2] = {src, seq};
  mp_fill(b, n, mp_seed(src, dst, msg_tag(phase, seq), (uint64_t)seq));
  memcpy(b, hdr, sizeof hdr);
}

static void run_phase(int phase, int count, size_t t, rrt_comm_t comm) {
  int nsenders = phase == 1 ? (mp_rank == 0 ? mp_size - 1 : 0) : mp_size - 1;
  int receiving = phase == 1 ? mp_rank == 0 : 1;
  int sending = phase == 1 ? mp_rank != 0 : 1;
  size_t maxn = t + 1 + 512;

  /* Post all sends non-blocking first: rendezvous sends must not block the receive loop. */
  int ndst = sending ? (phase == 1 ? 1 : mp_size - 1) : 0;
  rrt_request_t *sreq = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)(ndst * count + 1));
  unsigned char **sb = (unsigned char **)mp_alloc(sizeof(unsigned char *) * (size_t)(ndst * count + 1));
  int ns = 0;
  for (int seq = 0; seq < count; ++seq)
    for (int d = 0; d < ndst; ++d) {
      int dst = phase == 1 ? 0 : (mp_rank + 1 + d) % mp_size;
      size_t n = msg_size(t, mp_rank, seq);
      sb[ns] = (unsigned char *)mp_alloc(n);
      make_msg(sb[ns], n, mp_rank, dst, seq, phase);
      MP_CALL(rrt_isend(sb[ns], n, RRT_BYTE, dst, msg_tag(phase, seq), comm, &sreq[ns]));
      ++ns;
    }

  if (receiving) {
    int *next = (int *)calloc((size_t)mp_size, sizeof(int));
    unsigned char *rb = (unsigned char *)mp_alloc(maxn);
    for (int i = 0; i < nsenders * count; ++i) {
      rrt_status_t st;
      int32_t hdr[2];
      MP_CALL(rrt_recv(rb, maxn, RRT_BYTE, RRT_ANY_SOURCE, phase == 1 ? 42 : RRT_ANY_TAG,
                       comm, &st));
      memcpy(hdr, rb, sizeof hdr);
      int src = hdr[0], seq = hdr[1];
      if (st.source < 0 || st.source >= mp_size || st.source == (phase == 1 ? -1 : mp_rank)) {
        MP_EXPECT(0, "phase %d: status.source %d out of range", phase, st.source);
        continue;
      }
      MP_EXPECT(src == st.source, "phase %d: status.source %d but payload says %d", phase,
                st.source, src);
      MP_EXPECT(seq == next[st.source], "phase %d: from %d got seq %d, want %d (overtaken or lost)",
                phase, st.source, seq, next[st.source]);
      if (src == st.source && seq >= 0 && seq < count) {
        MP_EXPECT(st.tag == msg_tag(phase, seq), "phase %d: status.tag %d, want %d", phase, st.tag,
                  msg_tag(phase, seq));
        MP_EXPECT(st.bytes == msg_size(t, src, seq), "phase %d: status.bytes %zu, want %zu", phase,
                  st.bytes, msg_size(t, src, seq));
        unsigned char *want = (unsigned char *)mp_alloc(st.bytes);
        make_msg(want, st.bytes, src, mp_rank, seq, phase);
        MP_EXPECT(memcmp(want, rb, st.bytes) == 0, "phase %d: payload of seq %d from %d differs",
                  phase, seq, src);
        free(want);
      }
      next[st.source] = seq + 1;
    }
    for (int s = 0; s < mp_size; ++s) {
      int want = (s == mp_rank) ? 0 : (phase == 1 && s == 0 ? 0 : count);
      MP_EXPECT(next[s] == want, "phase %d: from %d received up to seq %d, want %d", phase, s,
                next[s], want);
    }
    free(next);
    free(rb);
  }
  MP_CALL(rrt_waitall((size_t)ns, sreq, RRT_STATUSES_IGNORE));
  for (int i = 0; i < ns; ++i) free(sb[i]);
  free(sb);
  free(sreq);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  int count = (int)mp_arg_size(argc, argv, "--count", 200);
  rrt_comm_t dup = RRT_COMM_NULL;
  run_phase(1, count, t, RRT_COMM_WORLD);
  MP_CALL(rrt_comm_dup(RRT_COMM_WORLD, &dup));
  run_phase(2, count / 4 > 0 ? count / 4 : 1, t, dup);
  MP_CALL(rrt_comm_free(&dup));
  return mp_finish("p2p_anysource");
}
