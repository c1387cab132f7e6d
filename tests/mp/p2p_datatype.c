/*
 * Contiguous derived datatypes over the wire (rank r sends to r+1):
 *   - type_size / type_extent of predefined and derived types;
 *   - 3 elements of contiguous(4, INT32) received as 12 INT32, get_count both ways;
 *   - a nested contiguous(1000, contiguous(4, INT32)), count chosen to cross the eager limit,
 *     received as BYTE;
 *   - a DOUBLE array sent as DOUBLE, values compared exactly;
 *   - the value-index pair type RRT_DOUBLE_INT, laid out as the C struct.
 */
#include "mp_util.h"

struct dint { double v; int i; };

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  int to = (mp_rank + 1) % mp_size, from = (mp_rank + mp_size - 1) % mp_size;
  rrt_datatype_t t4, tbig;
  size_t sz = 0, ext = 0, count = 0;
  rrt_status_t st;
  rrt_request_t req;

  static const struct { rrt_datatype_t type; size_t size; const char *name; } kSizes[] = {
      {RRT_BYTE, 1, "BYTE"}, {RRT_INT16, 2, "INT16"}, {RRT_INT32, 4, "INT32"},
      {RRT_UINT64, 8, "UINT64"}, {RRT_FLOAT, sizeof(float), "FLOAT"},
      {RRT_DOUBLE, sizeof(double), "DOUBLE"}, {RRT_FLOAT16, 2, "FLOAT16"},
      {RRT_BFLOAT16, 2, "BFLOAT16"}, {RRT_2INT, 2 * sizeof(int), "2INT"},
      {RRT_DOUBLE_INT, sizeof(struct dint), "DOUBLE_INT"},
  };
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) {
    MP_CALL(rrt_type_size(kSizes[i].type, &sz));
    MP_EXPECT(sz == kSizes[i].size, "type_size(%s) = %zu, want %zu", kSizes[i].name, sz, kSizes[i].size);
  }

  MP_CALL(rrt_type_contiguous(4, RRT_INT32, &t4));
  MP_CALL(rrt_type_size(t4, &sz));
  MP_CALL(rrt_type_extent(t4, &ext));
  MP_EXPECT(sz == 16 && ext == 16, "contiguous(4, INT32): size %zu extent %zu, want 16 16", sz, ext);
  MP_CALL(rrt_type_contiguous(1000, t4, &tbig));
  MP_CALL(rrt_type_size(tbig, &sz));
  MP_EXPECT(sz == 16000, "contiguous(1000, contiguous(4, INT32)): size %zu, want 16000", sz);

  /* 3 x t4 -> 12 x INT32 */
  {
    int32_t s[12], r[12];
    for (int i = 0; i < 12; ++i) s[i] = mp_rank * 100 + i, r[i] = -1;
    MP_CALL(rrt_isend(s, 3, t4, to, 1, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_recv(r, 12, RRT_INT32, from, 1, RRT_COMM_WORLD, &st));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_EXPECT(st.bytes == 48, "3 x contiguous(4, INT32): %zu bytes, want 48", st.bytes);
    MP_CALL(rrt_get_count(&st, t4, &count));
    MP_EXPECT(count == 3, "get_count(t4) = %zu, want 3", count);
    MP_CALL(rrt_get_count(&st, RRT_INT32, &count));
    MP_EXPECT(count == 12, "get_count(INT32) = %zu, want 12", count);
    for (int i = 0; i < 12; ++i)
      MP_EXPECT(r[i] == from * 100 + i, "int %d: got %d, want %d", i, r[i], from * 100 + i);
  }

  /* nested type, enough elements to go above the eager limit */
  {
    size_t n = t / 16000 + 2, bytes = n * 16000;
    unsigned char *s = (unsigned char *)mp_alloc(bytes), *r = (unsigned char *)mp_alloc(bytes);
    mp_fill(s, bytes, mp_seed(mp_rank, to, 2, bytes));
    MP_CALL(rrt_isend(s, n, tbig, to, 2, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_recv(r, bytes, RRT_BYTE, from, 2, RRT_COMM_WORLD, &st));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_EXPECT(st.bytes == bytes, "nested type: %zu bytes, want %zu", st.bytes, bytes);
    MP_CALL(rrt_get_count(&st, tbig, &count));
    MP_EXPECT(count == n, "get_count(nested) = %zu, want %zu", count, n);
    MP_EXPECT_PATTERN(r, bytes, mp_seed(from, mp_rank, 2, bytes), "nested contiguous from %d", from);
    /* and back the other way: sent as bytes, received as the nested type */
    MP_CALL(rrt_isend(s, bytes, RRT_BYTE, to, 3, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_recv(r, n, tbig, from, 3, RRT_COMM_WORLD, &st));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_EXPECT_PATTERN(r, bytes, mp_seed(from, mp_rank, 2, bytes), "bytes received as nested type");
    free(s);
    free(r);
  }

  /* doubles and (double, int) pairs */
  {
    double s[100], r[100];
    struct dint ps[10], pr[10];
    for (int i = 0; i < 100; ++i) s[i] = mp_rank + i / 7.0, r[i] = 0;
    for (int i = 0; i < 10; ++i) ps[i].v = mp_rank * 0.5 + i, ps[i].i = mp_rank * 10 + i;
    MP_CALL(rrt_isend(s, 100, RRT_DOUBLE, to, 4, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_recv(r, 100, RRT_DOUBLE, from, 4, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    for (int i = 0; i < 100; ++i)
      MP_EXPECT(r[i] == from + i / 7.0, "double %d: got %g", i, r[i]);
    MP_CALL(rrt_isend(ps, 10, RRT_DOUBLE_INT, to, 5, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_recv(pr, 10, RRT_DOUBLE_INT, from, 5, RRT_COMM_WORLD, &st));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_CALL(rrt_get_count(&st, RRT_DOUBLE_INT, &count));
    MP_EXPECT(count == 10, "get_count(DOUBLE_INT) = %zu, want 10", count);
    for (int i = 0; i < 10; ++i)
      MP_EXPECT(pr[i].v == from * 0.5 + i && pr[i].i == from * 10 + i, "pair %d: (%g, %d)", i,
                pr[i].v, pr[i].i);
  }

  MP_CALL(rrt_type_free(&tbig));
  MP_CALL(rrt_type_free(&t4));
  MP_EXPECT(t4 == RRT_DATATYPE_NULL && tbig == RRT_DATATYPE_NULL,
            "type_free did not set the handles to RRT_DATATYPE_NULL");
  return mp_finish("p2p_datatype");
}
