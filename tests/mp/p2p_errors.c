/*
 * Bad input through the C API: each bad argument gives its RRT_ERR_* code, nothing crashes,
 * and the job goes on working afterwards (the default error handler returns codes).
 *   - before rrt_init: RRT_ERR_NOT_INITIALIZED (rrt_initialized / rrt_finalized still work);
 *   - rank out of range, negative or too large tag, NULL buffer with count > 0, unknown or
 *     freed datatype, unknown or freed communicator, NULL output pointers, NULL requests
 *     given to cancel / request_free;
 *   - truncation (ranks 0 and 1, eager and rendezvous sizes): the receive returns
 *     RRT_ERR_TRUNCATE with status.error set and writes nothing past its buffer, waitall says
 *     RRT_ERR_IN_STATUS, and the sender completes with RRT_SUCCESS;
 *   - after rrt_finalize: RRT_ERR_FINALIZED.
 * Each bad call has exactly one bad argument, so the expected code is unambiguous.
 */
#include "mp_util.h"

#define GUARD 64

static void before_init(void) {
  int flag = -1, r = -1;
  char b[4] = {0};
  rrt_request_t req;
  MP_EXPECT_RC(RRT_SUCCESS, rrt_initialized(&flag));
  MP_EXPECT(flag == 0, "rrt_initialized before init: flag %d", flag);
  flag = -1;
  MP_EXPECT_RC(RRT_SUCCESS, rrt_finalized(&flag));
  MP_EXPECT(flag == 0, "rrt_finalized before init: flag %d", flag);
  MP_EXPECT_RC(RRT_ERR_NOT_INITIALIZED, rrt_send(b, 1, RRT_BYTE, 0, 0, RRT_COMM_WORLD));
  MP_EXPECT_RC(RRT_ERR_NOT_INITIALIZED, rrt_irecv(b, 1, RRT_BYTE, 0, 0, RRT_COMM_WORLD, &req));
  MP_EXPECT_RC(RRT_ERR_NOT_INITIALIZED, rrt_comm_rank(RRT_COMM_WORLD, &r));
  const char *s = rrt_strerror(RRT_ERR_TAG);
  MP_EXPECT(s && *s, "rrt_strerror(RRT_ERR_TAG) is empty before init");
}

static void after_finalize(void) {
  int flag = 0, r = -1;
  char b[4] = {0};
  MP_EXPECT_RC(RRT_SUCCESS, rrt_finalized(&flag));
  MP_EXPECT(flag == 1, "rrt_finalized after finalize: flag %d", flag);
  MP_EXPECT_RC(RRT_ERR_FINALIZED, rrt_send(b, 1, RRT_BYTE, 0, 0, RRT_COMM_WORLD));
  MP_EXPECT_RC(RRT_ERR_FINALIZED, rrt_recv(b, 1, RRT_BYTE, 0, 0, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
  MP_EXPECT_RC(RRT_ERR_FINALIZED, rrt_comm_rank(RRT_COMM_WORLD, &r));
  MP_EXPECT_RC(RRT_ERR_FINALIZED, rrt_finalize());
}

static void bad_arguments(void) {
  char b[16] = {0};
  int r = 0, flag = 0;
  size_t count = 0;
  rrt_request_t req = RRT_REQUEST_NULL;
  rrt_status_t st;
  const rrt_comm_t W = RRT_COMM_WORLD;
  const int n = mp_size;

  /* rank out of range */
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_send(b, 1, RRT_BYTE, n, 0, W));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_send(b, 1, RRT_BYTE, -5, 0, W));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_send(b, 1, RRT_BYTE, RRT_ANY_SOURCE, 0, W));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_ssend(b, 1, RRT_BYTE, n + 7, 0, W));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_isend(b, 1, RRT_BYTE, n, 0, W, &req));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_recv(b, 1, RRT_BYTE, n, 0, W, &st));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_recv(b, 1, RRT_BYTE, -7, 0, W, &st));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_irecv(b, 1, RRT_BYTE, n, 0, W, &req));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_probe(n, 0, W, &st));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_iprobe(n, 0, W, &flag, &st));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_send(b, 1, RRT_BYTE, 1, 0, RRT_COMM_SELF));
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_sendrecv(b, 1, RRT_BYTE, n, 0, b + 8, 1, RRT_BYTE, 0, 0, W, &st));

  /* tags: negative (ANY_TAG only on receives) or above RRT_TAG_UB */
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_send(b, 1, RRT_BYTE, 0, -2, W));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_send(b, 1, RRT_BYTE, 0, RRT_ANY_TAG, W));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_send(b, 1, RRT_BYTE, 0, RRT_TAG_UB + 1, W));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_isend(b, 1, RRT_BYTE, 0, -100, W, &req));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_ssend(b, 1, RRT_BYTE, 0, -3, W));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_recv(b, 1, RRT_BYTE, 0, -2, W, &st));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_irecv(b, 1, RRT_BYTE, 0, RRT_TAG_UB + 1, W, &req));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_probe(0, -5, W, &st));
  MP_EXPECT_RC(RRT_ERR_TAG, rrt_iprobe(0, -5, W, &flag, &st));

  /* NULL buffer with count > 0 */
  MP_EXPECT_RC(RRT_ERR_BUFFER, rrt_send(NULL, 4, RRT_BYTE, 0, 0, W));
  MP_EXPECT_RC(RRT_ERR_BUFFER, rrt_isend(NULL, 1, RRT_INT32, 0, 0, W, &req));
  MP_EXPECT_RC(RRT_ERR_BUFFER, rrt_recv(NULL, 4, RRT_BYTE, 0, 0, W, &st));
  MP_EXPECT_RC(RRT_ERR_BUFFER, rrt_irecv(NULL, 4, RRT_BYTE, 0, 0, W, &req));

  /* datatypes: unknown, null, freed */
  rrt_datatype_t freed;
  MP_CALL(rrt_type_contiguous(2, RRT_INT32, &freed));
  rrt_datatype_t stale = freed;
  MP_CALL(rrt_type_free(&freed));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_send(b, 1, 999, 0, 0, W));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_send(b, 1, RRT_DATATYPE_NULL, 0, 0, W));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_send(b, 1, RRT_PREDEFINED_TYPE_COUNT, 0, 0, W));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_send(b, 1, stale, 0, 0, W));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_irecv(b, 1, -77, 0, 0, W, &req));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_recv(b, 1, stale, 0, 0, W, &st));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_type_size(stale, &count));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_type_contiguous(2, 12345, &freed));
  MP_EXPECT_RC(RRT_ERR_TYPE, rrt_type_free(&stale));
  {
    rrt_datatype_t pre = RRT_INT32;
    MP_EXPECT_RC(RRT_ERR_TYPE, rrt_type_free(&pre)); /* predefined types cannot be freed */
  }

  /* communicators: unknown, null, freed */
  rrt_comm_t dead;
  MP_CALL(rrt_comm_dup(W, &dead));
  rrt_comm_t stale_comm = dead;
  MP_CALL(rrt_comm_free(&dead));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_send(b, 1, RRT_BYTE, 0, 0, 999));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_send(b, 1, RRT_BYTE, 0, 0, RRT_COMM_NULL));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_send(b, 1, RRT_BYTE, 0, 0, stale_comm));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_irecv(b, 1, RRT_BYTE, 0, 0, stale_comm, &req));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_recv(b, 1, RRT_BYTE, 0, 0, -42, &st));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_probe(0, 0, 999, &st));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_comm_rank(999, &r));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_comm_size(RRT_COMM_NULL, &r));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_comm_size(stale_comm, &r));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_comm_free(&stale_comm));

  /* NULL outputs and NULL requests */
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_comm_rank(W, NULL));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_comm_size(W, NULL));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_get_count(NULL, RRT_BYTE, &count));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_type_size(RRT_INT32, NULL));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_iprobe(0, 0, W, NULL, &st));
  {
    int rc = rrt_isend(b, 1, RRT_BYTE, 0, 0, W, NULL);
    MP_EXPECT(rc == RRT_ERR_ARG || rc == RRT_ERR_REQUEST,
              "isend with a NULL request pointer returned %d, want RRT_ERR_ARG or RRT_ERR_REQUEST", rc);
  }
  req = RRT_REQUEST_NULL;
  MP_EXPECT_RC(RRT_ERR_REQUEST, rrt_cancel(&req));
  MP_EXPECT_RC(RRT_ERR_REQUEST, rrt_request_free(&req));
  {
    rrt_status_t gs = {0, 0, 0, 0, 8};
    MP_EXPECT_RC(RRT_ERR_TYPE, rrt_get_count(&gs, 999, &count));
  }
  {
    rrt_errhandler_t h = RRT_ERRORS_ARE_FATAL;
    MP_CALL(rrt_comm_get_errhandler(W, &h));
    MP_EXPECT(h == RRT_ERRORS_RETURN, "default error handler of world is %d, want RRT_ERRORS_RETURN", h);
  }
  for (int code = 0; code <= RRT_ERR_LAST; ++code) {
    const char *s = rrt_strerror(code);
    MP_EXPECT(s && *s, "rrt_strerror(%d) is NULL or empty", code);
  }
  MP_EXPECT(rrt_strerror(-12345) != NULL, "rrt_strerror(-12345) is NULL");

  /* Edge cases that are valid: NULL buffer with count 0; tag RRT_TAG_UB. Through self. */
  {
    rrt_request_t sreq;
    MP_CALL(rrt_isend(NULL, 0, RRT_BYTE, mp_rank, RRT_TAG_UB - 2, W, &sreq));
    MP_CALL(rrt_recv(NULL, 0, RRT_BYTE, mp_rank, RRT_TAG_UB - 2, W, &st));
    MP_CALL(rrt_wait(&sreq, RRT_STATUS_IGNORE));
    MP_EXPECT(st.bytes == 0 && st.tag == RRT_TAG_UB - 2, "0-byte self message: bytes %zu tag %d",
              st.bytes, st.tag);
    MP_CALL(rrt_isend(b, 3, RRT_BYTE, mp_rank, RRT_TAG_UB, W, &sreq));
    MP_CALL(rrt_recv(b + 8, 3, RRT_BYTE, mp_rank, RRT_TAG_UB, W, &st));
    MP_CALL(rrt_wait(&sreq, RRT_STATUS_IGNORE));
    MP_EXPECT(st.tag == RRT_TAG_UB, "message with tag RRT_TAG_UB arrived with tag %d", st.tag);
  }
}

/* Rank 0 sends n bytes, rank 1 receives into room bytes (room < n). */
static void truncation(size_t n, size_t room, int tag) {
  unsigned char *b = (unsigned char *)mp_alloc(n + GUARD);
  rrt_status_t st;
  if (mp_rank == 0) {
    rrt_request_t req;
    mp_fill(b, n, mp_seed(0, 1, tag, n));
    MP_EXPECT_RC(RRT_SUCCESS, rrt_send(b, n, RRT_BYTE, 1, tag, RRT_COMM_WORLD));
    MP_EXPECT_RC(RRT_SUCCESS, rrt_isend(b, n, RRT_BYTE, 1, tag + 1, RRT_COMM_WORLD, &req));
    MP_EXPECT_RC(RRT_SUCCESS, rrt_wait(&req, &st));
    MP_EXPECT(st.error == RRT_SUCCESS, "sender of a truncated message: status.error %d", st.error);
    MP_EXPECT_RC(RRT_SUCCESS, rrt_send(b, n, RRT_BYTE, 1, tag + 2, RRT_COMM_WORLD));
    MP_EXPECT_RC(RRT_SUCCESS, rrt_send(b, room, RRT_BYTE, 1, tag + 3, RRT_COMM_WORLD));
  } else if (mp_rank == 1) {
    rrt_request_t req[2];
    rrt_status_t sts[2];
    unsigned char *ok = (unsigned char *)mp_alloc(room + 1);
    memset(b + room, 0xA5, GUARD);
    /* blocking receive */
    memset(&st, 0, sizeof st);
    MP_EXPECT_RC(RRT_ERR_TRUNCATE, rrt_recv(b, room, RRT_BYTE, 0, tag, RRT_COMM_WORLD, &st));
    MP_EXPECT(st.error == RRT_ERR_TRUNCATE && st.source == 0 && st.tag == tag,
              "truncated recv (%zu into %zu): status error %d source %d tag %d", n, room, st.error,
              st.source, st.tag);
    MP_EXPECT(st.bytes <= room, "truncated recv: status.bytes %zu exceeds the buffer (%zu)", st.bytes, room);
    /* irecv + wait */
    MP_CALL(rrt_irecv(b, room, RRT_BYTE, 0, tag + 1, RRT_COMM_WORLD, &req[0]));
    memset(&st, 0, sizeof st);
    MP_EXPECT_RC(RRT_ERR_TRUNCATE, rrt_wait(&req[0], &st));
    MP_EXPECT(st.error == RRT_ERR_TRUNCATE, "truncated irecv: status.error %d", st.error);
    /* waitall: one truncated, one fine */
    MP_CALL(rrt_irecv(b, room, RRT_BYTE, 0, tag + 2, RRT_COMM_WORLD, &req[0]));
    MP_CALL(rrt_irecv(ok, room + 1, RRT_BYTE, 0, tag + 3, RRT_COMM_WORLD, &req[1]));
    MP_EXPECT_RC(RRT_ERR_IN_STATUS, rrt_waitall(2, req, sts));
    MP_EXPECT(sts[0].error == RRT_ERR_TRUNCATE && sts[1].error == RRT_SUCCESS,
              "waitall: statuses error %d and %d, want TRUNCATE and SUCCESS", sts[0].error, sts[1].error);
    MP_EXPECT(sts[1].bytes == room, "waitall: good message %zu bytes, want %zu", sts[1].bytes, room);
    MP_EXPECT_PATTERN(ok, room, mp_seed(0, 1, tag, n), "message after truncations");
    for (int i = 0; i < GUARD; ++i)
      if (b[room + i] != 0xA5) {
        MP_EXPECT(0, "truncated receive (%zu into %zu) wrote past the buffer (guard byte %d)", n, room, i);
        break;
      }
    free(ok);
  }
  free(b);
}

int main(int argc, char **argv) {
  before_init();
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  bad_arguments();
  if (mp_size >= 2) {
    truncation(100, 50, 10);
    truncation(t + 100, 50, 20);
    truncation(t + 100, t > 0 ? t - 1 : 0, 30);
    truncation((size_t)1 << 20, 1000, 40);
  }
  /* the job still works: a ring exchange */
  {
    int v = mp_rank, w = -1;
    rrt_request_t req;
    MP_CALL(rrt_isend(&v, 1, RRT_INT32, (mp_rank + 1) % mp_size, 50, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_recv(&w, 1, RRT_INT32, (mp_rank + mp_size - 1) % mp_size, 50, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_EXPECT(w == (mp_rank + mp_size - 1) % mp_size, "ring after errors: got %d", w);
  }
  return mp_finish_with("p2p_errors", after_finalize);
}
