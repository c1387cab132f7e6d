/*
 * Cancel of sends, rank 0 -> rank 1 (other ranks only part 4 and finish). Sizes 0, 24, the
 * eager limit T, T+1 and 1 MiB (eager with fragments when T is large, else rendezvous), in
 * standard and synchronous mode:
 *   1. unmatched: rank 0 sends, cancels, waits (or tests until done): cancelled, bytes 0. Only
 *      then does rank 1 post receives on those tags, and it gets the sentinel rank 0 sent
 *      afterwards on the same tag, never the cancelled message;
 *   2. matched: rank 1 posts the receive first and has the data before rank 0 cancels: the
 *      send completes normally (cancelled 0, bytes n), also when cancelled twice;
 *   3. many in flight at once, matched and unmatched interleaved: rank 1 receives every other
 *      message, then rank 0 cancels all: exactly the unreceived ones are cancelled;
 *   4. every rank to itself: an unmatched send to self is cancelled, the sentinel arrives;
 * and at the end rank 1 finds nothing more from rank 0 (iprobe), so no cancelled message was
 * left behind in its unexpected queue;
 *   5. rank 0 cancels a send only once rank 1 has gone on to finish and finalize: the answer
 *      comes from rank 1's rrt_finalize, which keeps progressing until every rank arrived.
 */
#include "mp_util.h"

#define TAG_GO 2
#define TAG_DONE 3
#define TAG_END 4
#define NSIZES 5
#define NMANY 24

static size_t sizes[NSIZES];
static int sync_mode(int m) { return m == 1; }

static void post(const void *b, size_t n, int dst, int tag, int sync, rrt_request_t *req) {
  if (sync) MP_CALL(rrt_issend(b, n, RRT_BYTE, dst, tag, RRT_COMM_WORLD, req));
  else MP_CALL(rrt_isend(b, n, RRT_BYTE, dst, tag, RRT_COMM_WORLD, req));
}

/* Waits for req by rrt_wait, or by rrt_test in a loop when by_test. */
static void finish(rrt_request_t *req, rrt_status_t *st, int by_test) {
  if (!by_test) {
    MP_CALL(rrt_wait(req, st));
    return;
  }
  int flag = 0;
  while (!flag) MP_CALL(rrt_test(req, &flag, st));
}

/* The 8-byte message rank `from` sends on tag after its cancelled one. */
static int64_t sentinel(int tag) { return (int64_t)tag * 1000 + 7; }

/* Rank 1 side: receives the sentinel on each tag into a buffer big enough for any message. */
static void expect_sentinels(const int *tags, int count, int src, unsigned char *big, size_t bigLen) {
  for (int k = 0; k < count; ++k) {
    rrt_status_t st;
    int64_t v;
    MP_CALL(rrt_recv(big, bigLen, RRT_BYTE, src, tags[k], RRT_COMM_WORLD, &st));
    memcpy(&v, big, sizeof v);
    MP_EXPECT(st.bytes == sizeof v && v == sentinel(tags[k]),
              "tag %d: after the cancelled send, got %zu bytes (value %lld), want the 8-byte "
              "sentinel %lld", tags[k], st.bytes, (long long)v, (long long)sentinel(tags[k]));
  }
}

static void send_sentinels(const int *tags, int count, int dst) {
  for (int k = 0; k < count; ++k) {
    int64_t v = sentinel(tags[k]);
    MP_CALL(rrt_send(&v, sizeof v, RRT_BYTE, dst, tags[k], RRT_COMM_WORLD));
  }
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  const size_t t = mp_eager_limit();
  sizes[0] = 0;
  sizes[1] = 24;
  sizes[2] = t;
  sizes[3] = t + 1;
  sizes[4] = (size_t)1 << 20;
  size_t maxLen = sizes[4] > t + 1 ? sizes[4] : t + 1;
  unsigned char *buf = (unsigned char *)mp_alloc(maxLen);
  unsigned char *big = (unsigned char *)mp_alloc(maxLen);
  char c = 'x';
  int tags[2 * NSIZES + NMANY];

  if (mp_size >= 2 && mp_rank <= 1) {
    /* 1: unmatched sends are cancelled; the receiver never sees them */
    int n = 0;
    for (int i = 0; i < NSIZES; ++i)
      for (int m = 0; m < 2; ++m) tags[n++] = 100 + 10 * i + m;
    if (mp_rank == 0) {
      n = 0;
      for (int i = 0; i < NSIZES; ++i) {
        for (int m = 0; m < 2; ++m, ++n) {
          rrt_request_t req;
          rrt_status_t st;
          mp_fill(buf, sizes[i], mp_seed(0, 1, tags[n], sizes[i]));
          post(buf, sizes[i], 1, tags[n], sync_mode(m), &req);
          MP_CALL(rrt_cancel(&req));
          finish(&req, &st, i % 2);
          MP_EXPECT(st.cancelled == 1, "%s send of %zu bytes, unmatched: cancelled %d after %s",
                    m ? "synchronous" : "standard", sizes[i], st.cancelled, i % 2 ? "test" : "wait");
          MP_EXPECT(req == RRT_REQUEST_NULL, "completion after cancel left the handle non-NULL");
          MP_EXPECT(st.error == RRT_SUCCESS && st.bytes == 0,
                    "cancelled send of %zu bytes: error %d bytes %zu", sizes[i], st.error, st.bytes);
        }
      }
      MP_CALL(rrt_send(&c, 1, RRT_CHAR, 1, TAG_GO, RRT_COMM_WORLD));
      send_sentinels(tags, n, 1);
    } else {
      MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 0, TAG_GO, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
      expect_sentinels(tags, n, 0, big, maxLen);
    }

    /* 2: matched sends complete normally */
    for (int i = 0; i < NSIZES; ++i) {
      for (int m = 0; m < 2; ++m) {
        int tag = 200 + 10 * i + m;
        uint64_t seed = mp_seed(0, 1, tag, sizes[i]);
        if (mp_rank == 0) {
          rrt_request_t req;
          rrt_status_t st;
          mp_fill(buf, sizes[i], seed);
          MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 1, TAG_GO, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
          post(buf, sizes[i], 1, tag, sync_mode(m), &req);
          MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 1, TAG_DONE, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
          MP_CALL(rrt_cancel(&req));
          MP_CALL(rrt_cancel(&req));
          finish(&req, &st, i % 2);
          MP_EXPECT(st.cancelled == 0 && st.error == RRT_SUCCESS && st.bytes == sizes[i],
                    "%s send of %zu bytes, received before the cancel: cancelled %d error %d "
                    "bytes %zu", m ? "synchronous" : "standard", sizes[i], st.cancelled,
                    st.error, st.bytes);
        } else {
          rrt_request_t req;
          rrt_status_t st;
          MP_CALL(rrt_irecv(big, maxLen, RRT_BYTE, 0, tag, RRT_COMM_WORLD, &req));
          MP_CALL(rrt_send(&c, 1, RRT_CHAR, 0, TAG_GO, RRT_COMM_WORLD));
          MP_CALL(rrt_wait(&req, &st));
          MP_EXPECT(st.bytes == sizes[i] && !st.cancelled, "matched receive of %zu: bytes %zu cancelled %d",
                    sizes[i], st.bytes, st.cancelled);
          MP_EXPECT_PATTERN(big, sizes[i], seed, "matched message (tag %d)", tag);
          MP_CALL(rrt_send(&c, 1, RRT_CHAR, 0, TAG_DONE, RRT_COMM_WORLD));
        }
      }
    }

    /* 3: many in flight; even k are received, odd k are not */
    {
      rrt_request_t reqs[NMANY];
      rrt_status_t sts[NMANY];
      unsigned char *bufs[NMANY];
      int odd[NMANY / 2];
      for (int k = 0; k < NMANY; ++k) {
        /* sizes cycle through 24, T, T+1 and, every 6th, 1 MiB */
        size_t len = k % 6 == 5 ? sizes[4] : sizes[1 + k % 3];
        bufs[k] = (unsigned char *)mp_alloc(len);
        if (k % 2) odd[k / 2] = 300 + k;
        if (mp_rank == 0) {
          mp_fill(bufs[k], len, mp_seed(0, 1, 300 + k, len));
          post(bufs[k], len, 1, 300 + k, (k / 2) % 2, &reqs[k]);
        }
      }
      if (mp_rank == 0) {
        MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 1, TAG_DONE, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
        for (int k = NMANY - 1; k >= 0; --k) MP_CALL(rrt_cancel(&reqs[k]));
        MP_CALL(rrt_waitall(NMANY, reqs, sts));
        for (int k = 0; k < NMANY; ++k)
          MP_EXPECT(sts[k].cancelled == (k % 2), "in flight #%d (%s): cancelled %d, want %d", k,
                    k % 2 ? "never received" : "received", sts[k].cancelled, k % 2);
        MP_CALL(rrt_send(&c, 1, RRT_CHAR, 1, TAG_GO, RRT_COMM_WORLD));
        send_sentinels(odd, NMANY / 2, 1);
      } else {
        for (int k = 0; k < NMANY; k += 2) {
          size_t len = k % 6 == 5 ? sizes[4] : sizes[1 + k % 3];
          rrt_status_t st;
          MP_CALL(rrt_recv(big, maxLen, RRT_BYTE, 0, 300 + k, RRT_COMM_WORLD, &st));
          MP_EXPECT(st.bytes == len, "in flight #%d: %zu bytes, want %zu", k, st.bytes, len);
          MP_EXPECT_PATTERN(big, len, mp_seed(0, 1, 300 + k, len), "in flight #%d", k);
        }
        MP_CALL(rrt_send(&c, 1, RRT_CHAR, 0, TAG_DONE, RRT_COMM_WORLD));
        MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 0, TAG_GO, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
        expect_sentinels(odd, NMANY / 2, 0, big, maxLen);
      }
      for (int k = 0; k < NMANY; ++k) free(bufs[k]);
    }
  }

  /* 4: to self */
  for (int i = 0; i < NSIZES; ++i) {
    for (int m = 0; m < 2; ++m) {
      int tag = 400 + 10 * i + m;
      rrt_request_t req;
      rrt_status_t st;
      post(buf, sizes[i], mp_rank, tag, sync_mode(m), &req);
      MP_CALL(rrt_cancel(&req));
      finish(&req, &st, m);
      MP_EXPECT(st.cancelled == 1, "%s send of %zu bytes to self, unmatched: cancelled %d",
                m ? "synchronous" : "standard", sizes[i], st.cancelled);
      {
        /* the sentinel's receive is posted first: a blocking send to self may be a rendezvous */
        int64_t v = sentinel(tag);
        rrt_request_t rreq;
        MP_CALL(rrt_irecv(big, maxLen, RRT_BYTE, mp_rank, tag, RRT_COMM_WORLD, &rreq));
        MP_CALL(rrt_send(&v, sizeof v, RRT_BYTE, mp_rank, tag, RRT_COMM_WORLD));
        MP_CALL(rrt_wait(&rreq, &st));
        memcpy(&v, big, sizeof v);
        MP_EXPECT(st.bytes == sizeof v && v == sentinel(tag),
                  "to self, tag %d: after the cancelled send, got %zu bytes (value %lld), want the "
                  "sentinel", tag, st.bytes, (long long)v);
      }
    }
  }

  /* nothing left over from rank 0 */
  if (mp_size >= 2 && mp_rank <= 1) {
    if (mp_rank == 0) {
      MP_CALL(rrt_send(&c, 1, RRT_CHAR, 1, TAG_END, RRT_COMM_WORLD));
    } else {
      int flag = 1;
      MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 0, TAG_END, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
      MP_CALL(rrt_iprobe(0, RRT_ANY_TAG, RRT_COMM_WORLD, &flag, RRT_STATUS_IGNORE));
      MP_EXPECT(!flag, "a message from rank 0 is still waiting after all were received or cancelled");
    }
  }
  {
    int flag = 1;
    MP_CALL(rrt_iprobe(mp_rank, RRT_ANY_TAG, RRT_COMM_WORLD, &flag, RRT_STATUS_IGNORE));
    MP_EXPECT(!flag, "a message to self is still waiting after its send was cancelled");
  }
  /* 5: answered from inside the receiver's finalize */
  if (mp_size >= 2 && mp_rank <= 1) {
    if (mp_rank == 0) {
      /* rank 1's last message before it finishes: from here on it is in mp_finish / finalize */
      rrt_request_t req;
      rrt_status_t st;
      MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 1, TAG_END, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
      MP_CALL(rrt_isend(buf, 24, RRT_BYTE, 1, 500, RRT_COMM_WORLD, &req));
      MP_CALL(rrt_cancel(&req));
      MP_CALL(rrt_wait(&req, &st));
      MP_EXPECT(st.cancelled == 1, "send cancelled while its receiver finalizes: cancelled %d",
                st.cancelled);
    } else {
      MP_CALL(rrt_send(&c, 1, RRT_CHAR, 0, TAG_END, RRT_COMM_WORLD));
    }
  }
  free(buf);
  free(big);
  return mp_finish("p2p_cancel_send");
}
