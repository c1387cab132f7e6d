/*
 * Completion calls and rrt_get_count. Rank 0 posts one receive from each other rank (tag =
 * source rank, size depends on the source, some above the eager limit), interleaved with
 * RRT_REQUEST_NULL entries, and drains them three times over: waitany, waitsome, and a
 * testall that must say "not yet" while one sender is held back by a handshake. Checks:
 * indices are valid and each completes once, the handle becomes NULL, statuses are right,
 * calls on all-NULL arrays return RRT_UNDEFINED, wait/test on a NULL request give an empty
 * status, and get_count converts bytes to elements (RRT_COUNT_UNDEFINED when not a multiple).
 */
#include "mp_util.h"

#define TAG_GO 1000

static size_t size_from(size_t t, int src, int round) {
  return (src + round) % 2 ? t + 8 * (size_t)src : 12 * (size_t)src;
}

/* Everybody but 0 sends one message per round; in round 2 only after a "go" from rank 0. */
static void send_round(size_t t, int round, unsigned char *b) {
  size_t n = size_from(t, mp_rank, round);
  if (round == 2) {
    char c;
    MP_CALL(rrt_recv(&c, 1, RRT_CHAR, 0, TAG_GO, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
  }
  mp_fill(b, n, mp_seed(mp_rank, 0, mp_rank, (uint64_t)round));
  MP_CALL(rrt_send(b, n, RRT_BYTE, 0, mp_rank, RRT_COMM_WORLD));
}

/* Rank 0: slots 2*(src-1) hold the receive from src, odd slots stay NULL. */
static void post_round(size_t t, int round, unsigned char **rb, rrt_request_t *req) {
  for (int s = 1; s < mp_size; ++s) {
    MP_CALL(rrt_irecv(rb[s], size_from(t, s, round), RRT_BYTE, s, s, RRT_COMM_WORLD, &req[2 * (s - 1)]));
    req[2 * (s - 1) + 1] = RRT_REQUEST_NULL;
  }
}

static void check_one(size_t t, int round, int index, const rrt_status_t *st, unsigned char **rb,
                      int *seen, const char *call) {
  if (index < 0 || index >= 2 * (mp_size - 1) || index % 2) {
    MP_EXPECT(0, "%s returned index %d (not an active slot)", call, index);
    return;
  }
  int s = index / 2 + 1;
  MP_EXPECT(!seen[s], "%s completed slot %d twice", call, index);
  seen[s] = 1;
  size_t n = size_from(t, s, round);
  MP_EXPECT(st->source == s && st->tag == s && st->bytes == n && st->error == RRT_SUCCESS,
            "%s slot %d: status source %d tag %d bytes %zu error %d", call, index, st->source,
            st->tag, st->bytes, st->error);
  MP_EXPECT_PATTERN(rb[s], n, mp_seed(s, 0, s, (uint64_t)round), "%s: message from %d", call, s);
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  size_t maxn = t + 8 * (size_t)mp_size + 12 * (size_t)mp_size;
  int nslots = 2 * (mp_size - 1);

  if (mp_rank != 0) {
    unsigned char *b = (unsigned char *)mp_alloc(maxn);
    for (int round = 0; round < 3; ++round) send_round(t, round, b);
    free(b);
  } else if (mp_size > 1) {
    unsigned char **rb = (unsigned char **)mp_alloc(sizeof(void *) * (size_t)mp_size);
    rrt_request_t *req = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)nslots);
    rrt_status_t *sts = (rrt_status_t *)mp_alloc(sizeof(rrt_status_t) * (size_t)nslots);
    int *idx = (int *)mp_alloc(sizeof(int) * (size_t)nslots);
    int *seen = (int *)mp_alloc(sizeof(int) * (size_t)mp_size);
    for (int s = 0; s < mp_size; ++s) rb[s] = (unsigned char *)mp_alloc(maxn);
    int index, outcount, flag;
    rrt_status_t st;

    /* round 0: waitany */
    memset(seen, 0, sizeof(int) * (size_t)mp_size);
    post_round(t, 0, rb, req);
    for (int k = 0; k < mp_size - 1; ++k) {
      MP_CALL(rrt_waitany((size_t)nslots, req, &index, &st));
      check_one(t, 0, index, &st, rb, seen, "waitany");
      if (index >= 0 && index < nslots)
        MP_EXPECT(req[index] == RRT_REQUEST_NULL, "waitany left slot %d non-NULL", index);
    }
    index = 0;
    MP_CALL(rrt_waitany((size_t)nslots, req, &index, &st));
    MP_EXPECT(index == RRT_UNDEFINED, "waitany on all-NULL requests gave index %d", index);
    flag = 0;
    index = 0;
    MP_CALL(rrt_testany((size_t)nslots, req, &index, &flag, &st));
    MP_EXPECT(flag && index == RRT_UNDEFINED, "testany on all-NULL requests: flag %d index %d", flag, index);

    /* round 1: waitsome */
    memset(seen, 0, sizeof(int) * (size_t)mp_size);
    post_round(t, 1, rb, req);
    for (int done = 0; done < mp_size - 1;) {
      MP_CALL(rrt_waitsome((size_t)nslots, req, &outcount, idx, sts));
      MP_EXPECT(outcount >= 1 && outcount <= mp_size - 1 - done, "waitsome outcount %d", outcount);
      if (outcount < 1 || outcount > mp_size - 1 - done) break;
      for (int j = 0; j < outcount; ++j) check_one(t, 1, idx[j], &sts[j], rb, seen, "waitsome");
      done += outcount;
    }
    outcount = 0;
    MP_CALL(rrt_waitsome((size_t)nslots, req, &outcount, idx, sts));
    MP_EXPECT(outcount == RRT_UNDEFINED, "waitsome on all-NULL requests: outcount %d", outcount);

    /* round 2: testall cannot succeed before the senders are released */
    memset(seen, 0, sizeof(int) * (size_t)mp_size);
    post_round(t, 2, rb, req);
    flag = 1;
    for (int k = 0; k < 200 && flag; ++k) MP_CALL(rrt_testall((size_t)nslots, req, &flag, sts));
    MP_EXPECT(!flag, "testall reported completion before any round-2 message was sent");
    for (int s = 1; s < mp_size; ++s) MP_CALL(rrt_send(&flag, 1, RRT_CHAR, s, TAG_GO, RRT_COMM_WORLD));
    while (!flag) MP_CALL(rrt_testall((size_t)nslots, req, &flag, sts));
    for (int i = 0; i < nslots; i += 2) check_one(t, 2, i, &sts[i], rb, seen, "testall");
    for (int i = 0; i < nslots; ++i)
      MP_EXPECT(req[i] == RRT_REQUEST_NULL, "testall left slot %d non-NULL", i);

    for (int s = 0; s < mp_size; ++s) free(rb[s]);
    free(rb); free(req); free(sts); free(idx); free(seen);
  }

  /* NULL requests and get_count need no peer. */
  {
    rrt_request_t nreq = RRT_REQUEST_NULL;
    rrt_status_t st;
    int flag = 0;
    memset(&st, 0x5a, sizeof st);
    MP_CALL(rrt_wait(&nreq, &st));
    MP_EXPECT(st.bytes == 0 && st.error == RRT_SUCCESS && st.cancelled == 0,
              "wait(NULL request): status not empty (bytes %zu error %d)", st.bytes, st.error);
    MP_CALL(rrt_test(&nreq, &flag, &st));
    MP_EXPECT(flag, "test(NULL request): flag 0");
    MP_CALL(rrt_waitall(0, NULL, RRT_STATUSES_IGNORE));

    size_t count = 0;
    rrt_datatype_t t3;
    MP_CALL(rrt_type_contiguous(3, RRT_INT32, &t3));
    rrt_status_t gs = {0, 0, 0, 0, 12};
    MP_CALL(rrt_get_count(&gs, RRT_INT32, &count));
    MP_EXPECT(count == 3, "get_count(12 bytes, INT32) = %zu", count);
    MP_CALL(rrt_get_count(&gs, RRT_BYTE, &count));
    MP_EXPECT(count == 12, "get_count(12 bytes, BYTE) = %zu", count);
    MP_CALL(rrt_get_count(&gs, t3, &count));
    MP_EXPECT(count == 1, "get_count(12 bytes, contiguous(3, INT32)) = %zu", count);
    MP_CALL(rrt_get_count(&gs, RRT_INT64, &count));
    MP_EXPECT(count == RRT_COUNT_UNDEFINED, "get_count(12 bytes, INT64) = %zu, want RRT_COUNT_UNDEFINED", count);
    gs.bytes = 0;
    MP_CALL(rrt_get_count(&gs, RRT_DOUBLE, &count));
    MP_EXPECT(count == 0, "get_count(0 bytes, DOUBLE) = %zu", count);
    MP_CALL(rrt_type_free(&t3));
  }
  return mp_finish("p2p_completion");
}
