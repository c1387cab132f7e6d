/*
 * Communicators keep traffic apart. Checks:
 *   - dup: same size and ranks as world; comm_world_rank is the identity;
 *   - split by parity with reversed keys: sizes, ranks ordered by key, comm_world_rank;
 *   - split with RRT_UNDEFINED gives RRT_COMM_NULL to that rank only;
 *   - the same (source, tag) sent first on dup, then on world: a world receive with
 *     ANY_SOURCE must take the world message, a dup receive with ANY_TAG the dup one;
 *   - a wildcard receive pending on dup is not completed by world traffic;
 *   - a ring inside each split communicator uses split ranks in status.source;
 *   - comm_free sets the handle to RRT_COMM_NULL;
 *   - comm_free with a receive, a rendezvous send and a non-blocking allreduce still running on
 *     the communicator: they complete normally (MPI_Comm_free semantics), even when a new
 *     communicator is created right after the free (it would reuse the freed object's memory).
 * Sizes straddle the eager limit, so both protocols carry the context id.
 */
#include "mp_util.h"

static void fill_msg(unsigned char *b, size_t n, int src, int dst, int which) {
  mp_fill(b, n, mp_seed(src, dst, 7, (uint64_t)which * 1000003u + n));
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t t = mp_eager_limit();
  size_t sizes[3] = {8, t + 1, 3 * t + 7};
  int to = (mp_rank + 1) % mp_size, from = (mp_rank + mp_size - 1) % mp_size;
  rrt_comm_t dup = RRT_COMM_NULL, split = RRT_COMM_NULL, part = RRT_COMM_NULL, dupsplit = RRT_COMM_NULL;
  int sz = -1, rk = -1, wr = -1;

  /* dup */
  MP_CALL(rrt_comm_dup(RRT_COMM_WORLD, &dup));
  MP_EXPECT(dup != RRT_COMM_NULL && dup != RRT_COMM_WORLD, "comm_dup returned handle %d", dup);
  MP_CALL(rrt_comm_size(dup, &sz));
  MP_CALL(rrt_comm_rank(dup, &rk));
  MP_EXPECT(sz == mp_size && rk == mp_rank, "dup: size %d rank %d, want %d %d", sz, rk, mp_size, mp_rank);
  for (int i = 0; i < mp_size; ++i) {
    MP_CALL(rrt_comm_world_rank(dup, i, &wr));
    MP_EXPECT(wr == i, "dup: world rank of %d is %d", i, wr);
  }

  /* split by parity, key -rank: new ranks in decreasing world rank */
  int color = mp_rank % 2, members = 0, above = 0;
  MP_CALL(rrt_comm_split(RRT_COMM_WORLD, color, -mp_rank, &split));
  for (int r = 0; r < mp_size; ++r)
    if (r % 2 == color) {
      ++members;
      if (r > mp_rank) ++above;
    }
  MP_CALL(rrt_comm_size(split, &sz));
  MP_CALL(rrt_comm_rank(split, &rk));
  MP_EXPECT(sz == members && rk == above, "split: size %d rank %d, want %d %d", sz, rk, members, above);
  for (int i = 0, r = mp_size - 1; r >= 0; --r)
    if (r % 2 == color) {
      MP_CALL(rrt_comm_world_rank(split, i, &wr));
      MP_EXPECT(wr == r, "split: world rank of %d is %d, want %d", i, wr, r);
      ++i;
    }

  /* split with RRT_UNDEFINED for rank 0 */
  MP_CALL(rrt_comm_split(RRT_COMM_WORLD, mp_rank == 0 ? RRT_UNDEFINED : 3, mp_rank, &part));
  if (mp_rank == 0) {
    MP_EXPECT(part == RRT_COMM_NULL, "split with RRT_UNDEFINED gave handle %d, want RRT_COMM_NULL", part);
  } else {
    MP_CALL(rrt_comm_size(part, &sz));
    MP_CALL(rrt_comm_rank(part, &rk));
    MP_EXPECT(sz == mp_size - 1 && rk == mp_rank - 1, "partial split: size %d rank %d", sz, rk);
  }

  for (int si = 0; si < 3; ++si) {
    size_t n = sizes[si];
    unsigned char *s_w = (unsigned char *)mp_alloc(n), *s_d = (unsigned char *)mp_alloc(n);
    unsigned char *r_w = (unsigned char *)mp_alloc(n), *r_d = (unsigned char *)mp_alloc(n);
    unsigned char *w = (unsigned char *)mp_alloc(n);
    rrt_request_t sreq[2], rreq;
    rrt_status_t st;
    int flag = 1;

    /* Same source and tag on dup first, then on world: each receive takes its own. */
    fill_msg(s_d, n, mp_rank, to, 1);
    fill_msg(s_w, n, mp_rank, to, 0);
    MP_CALL(rrt_isend(s_d, n, RRT_BYTE, to, 7, dup, &sreq[0]));
    MP_CALL(rrt_isend(s_w, n, RRT_BYTE, to, 7, RRT_COMM_WORLD, &sreq[1]));
    MP_CALL(rrt_recv(r_w, n, RRT_BYTE, RRT_ANY_SOURCE, 7, RRT_COMM_WORLD, &st));
    fill_msg(w, n, from, mp_rank, 0);
    MP_EXPECT(st.source == from && memcmp(w, r_w, n) == 0,
              "%zu bytes: the world receive got source %d / the wrong payload (dup message?)", n,
              st.source);
    MP_CALL(rrt_recv(r_d, n, RRT_BYTE, RRT_ANY_SOURCE, RRT_ANY_TAG, dup, &st));
    fill_msg(w, n, from, mp_rank, 1);
    MP_EXPECT(st.source == from && st.tag == 7 && memcmp(w, r_d, n) == 0,
              "%zu bytes: the dup receive got source %d tag %d / the wrong payload", n, st.source,
              st.tag);
    MP_CALL(rrt_waitall(2, sreq, RRT_STATUSES_IGNORE));

    /* A wildcard receive pending on dup while world traffic flows: it must stay pending
     * until the dup message, which is sent only after the receiver says so. */
    MP_CALL(rrt_irecv(r_d, n, RRT_BYTE, RRT_ANY_SOURCE, RRT_ANY_TAG, dup, &rreq));
    MP_CALL(rrt_isend(s_w, n, RRT_BYTE, to, 7, RRT_COMM_WORLD, &sreq[1]));
    MP_CALL(rrt_recv(r_w, n, RRT_BYTE, from, 7, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    MP_CALL(rrt_wait(&sreq[1], RRT_STATUS_IGNORE));
    fill_msg(w, n, from, mp_rank, 0);
    MP_EXPECT(memcmp(w, r_w, n) == 0, "%zu bytes: world ring payload wrong", n);
    MP_CALL(rrt_test(&rreq, &flag, &st));
    MP_EXPECT(!flag, "%zu bytes: a wildcard receive on dup completed with no dup message sent "
              "(source %d tag %d)", n, st.source, st.tag);
    {
      char go = 'g';
      rrt_request_t greq;
      MP_CALL(rrt_isend(&go, 1, RRT_CHAR, from, 8, RRT_COMM_WORLD, &greq));
      MP_CALL(rrt_recv(&go, 1, RRT_CHAR, to, 8, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
      MP_CALL(rrt_wait(&greq, RRT_STATUS_IGNORE));
    }
    MP_CALL(rrt_isend(s_d, n, RRT_BYTE, to, 9, dup, &sreq[0]));
    if (!flag) MP_CALL(rrt_wait(&rreq, &st));
    MP_CALL(rrt_wait(&sreq[0], RRT_STATUS_IGNORE));
    fill_msg(w, n, from, mp_rank, 1);
    MP_EXPECT(st.source == from && st.tag == 9 && memcmp(w, r_d, n) == 0,
              "%zu bytes: pending dup receive got source %d tag %d / wrong payload", n, st.source,
              st.tag);

    /* Ring inside the split communicator, in its own ranks. */
    {
      int ssz, srk;
      MP_CALL(rrt_comm_size(split, &ssz));
      MP_CALL(rrt_comm_rank(split, &srk));
      int sto = (srk + 1) % ssz, sfrom = (srk + ssz - 1) % ssz;
      fill_msg(s_w, n, srk, sto, 2);
      MP_CALL(rrt_isend(s_w, n, RRT_BYTE, sto, 7, split, &sreq[0]));
      MP_CALL(rrt_recv(r_w, n, RRT_BYTE, RRT_ANY_SOURCE, 7, split, &st));
      MP_CALL(rrt_wait(&sreq[0], RRT_STATUS_IGNORE));
      fill_msg(w, n, sfrom, srk, 2);
      MP_EXPECT(st.source == sfrom && memcmp(w, r_w, n) == 0,
                "%zu bytes: split ring: status.source %d (want split rank %d) or payload wrong", n,
                st.source, sfrom);
    }
    free(s_w); free(s_d); free(r_w); free(r_d); free(w);
  }

  /* A dup of the split communicator is isolated from its parent. */
  MP_CALL(rrt_comm_dup(split, &dupsplit));
  {
    int ssz, srk, a = -1, b = -1;
    MP_CALL(rrt_comm_size(dupsplit, &ssz));
    MP_CALL(rrt_comm_rank(dupsplit, &srk));
    int sto = (srk + 1) % ssz;
    int va = 1000 + srk, vb = 2000 + srk;
    rrt_request_t q[2];
    MP_CALL(rrt_isend(&vb, 1, RRT_INT32, sto, 1, dupsplit, &q[0]));
    MP_CALL(rrt_isend(&va, 1, RRT_INT32, sto, 1, split, &q[1]));
    MP_CALL(rrt_recv(&a, 1, RRT_INT32, RRT_ANY_SOURCE, RRT_ANY_TAG, split, RRT_STATUS_IGNORE));
    MP_CALL(rrt_recv(&b, 1, RRT_INT32, RRT_ANY_SOURCE, RRT_ANY_TAG, dupsplit, RRT_STATUS_IGNORE));
    MP_CALL(rrt_waitall(2, q, RRT_STATUSES_IGNORE));
    int sfrom = (srk + ssz - 1) % ssz;
    MP_EXPECT(a == 1000 + sfrom && b == 2000 + sfrom,
              "split/dup-of-split crossed: got %d on split, %d on its dup", a, b);
  }

  /* Freed while busy. */
  {
    size_t n = 3 * t + 7;
    unsigned char *sb = (unsigned char *)mp_alloc(n), *rb = (unsigned char *)mp_alloc(n);
    unsigned char *w = (unsigned char *)mp_alloc(n);
    rrt_comm_t busy = RRT_COMM_NULL, next = RRT_COMM_NULL;
    rrt_request_t q[3];
    int64_t mine = 1 + mp_rank, sum = 0;
    MP_CALL(rrt_comm_dup(RRT_COMM_WORLD, &busy));
    fill_msg(sb, n, mp_rank, to, 3);
    MP_CALL(rrt_irecv(rb, n, RRT_BYTE, from, 5, busy, &q[0]));
    MP_CALL(rrt_iallreduce(&mine, &sum, 1, RRT_INT64, RRT_SUM, busy, &q[1]));
    MP_CALL(rrt_isend(sb, n, RRT_BYTE, to, 5, busy, &q[2]));
    MP_CALL(rrt_comm_free(&busy));
    MP_EXPECT(busy == RRT_COMM_NULL, "comm_free of a busy communicator left handle %d", busy);
    MP_CALL(rrt_comm_dup(RRT_COMM_WORLD, &next));
    rrt_status_t st[3];
    MP_CALL(rrt_waitall(3, q, st));
    fill_msg(w, n, from, mp_rank, 3);
    MP_EXPECT(st[0].source == from && st[0].tag == 5 && memcmp(w, rb, n) == 0,
              "receive on a freed communicator: source %d tag %d / wrong payload", st[0].source,
              st[0].tag);
    MP_EXPECT(sum == (int64_t)mp_size * (mp_size + 1) / 2,
              "iallreduce on a freed communicator gave %lld", (long long)sum);
    /* The new communicator works and is apart from the freed one. */
    mine = 10;
    MP_CALL(rrt_allreduce(&mine, &sum, 1, RRT_INT64, RRT_SUM, next));
    MP_EXPECT(sum == 10 * (int64_t)mp_size, "allreduce on the next communicator gave %lld",
              (long long)sum);
    MP_CALL(rrt_comm_free(&next));
    free(sb); free(rb); free(w);
  }

  MP_CALL(rrt_comm_free(&dupsplit));
  MP_CALL(rrt_comm_free(&split));
  MP_CALL(rrt_comm_free(&dup));
  if (part != RRT_COMM_NULL) MP_CALL(rrt_comm_free(&part));
  MP_EXPECT(dup == RRT_COMM_NULL && split == RRT_COMM_NULL && dupsplit == RRT_COMM_NULL &&
                part == RRT_COMM_NULL,
            "comm_free did not set handles to RRT_COMM_NULL");
  return mp_finish("p2p_comm");
}
