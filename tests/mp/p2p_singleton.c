/*
 * A world of one, run directly without any launcher: rrt_init must succeed with size 1 and
 * rank 0, world and self behave alike, self-sends of every size class work (isend + recv and
 * irecv + ssend), and rank 1 is out of range. The runner starts this with launcher=none and
 * the launchers' variables (PMIX_*, OMPI_*) removed from the environment.
 */
#include "mp_util.h"

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  MP_EXPECT(mp_size == 1 && mp_rank == 0, "without a launcher: size %d rank %d, want 1 and 0",
            mp_size, mp_rank);
  char name[256] = {0};
  MP_CALL(rrt_get_processor_name(name, sizeof name));
  MP_EXPECT(name[0] != '\0', "rrt_get_processor_name gave an empty name");
  int wr = -1;
  MP_CALL(rrt_comm_world_rank(RRT_COMM_SELF, 0, &wr));
  MP_EXPECT(wr == 0, "world rank of COMM_SELF rank 0 is %d", wr);
  char b = 0;
  MP_EXPECT_RC(RRT_ERR_RANK, rrt_send(&b, 1, RRT_CHAR, 1, 0, RRT_COMM_WORLD));

  size_t t = mp_eager_limit();
  size_t sizes[MP_MAX_CLASSES];
  int nsizes = mp_size_classes(t, (size_t)4 << 20, sizes);
  unsigned char *sb = (unsigned char *)mp_alloc((size_t)4 << 20);
  unsigned char *rb = (unsigned char *)mp_alloc((size_t)4 << 20);
  for (int i = 0; i < nsizes; ++i) {
    size_t n = sizes[i];
    rrt_request_t req;
    rrt_status_t st;
    uint64_t seed = mp_seed(0, 0, i, n);
    mp_fill(sb, n, seed);
    memset(rb, 0, n);
    MP_CALL(rrt_isend(sb, n, RRT_BYTE, 0, i, RRT_COMM_WORLD, &req));
    MP_CALL(rrt_recv(rb, n, RRT_BYTE, RRT_ANY_SOURCE, RRT_ANY_TAG, RRT_COMM_WORLD, &st));
    MP_CALL(rrt_wait(&req, RRT_STATUS_IGNORE));
    MP_EXPECT(st.source == 0 && st.tag == i && st.bytes == n, "self %zu bytes: source %d tag %d bytes %zu",
              n, st.source, st.tag, st.bytes);
    MP_EXPECT_PATTERN(rb, n, seed, "isend/recv to self");

    memset(rb, 0, n);
    MP_CALL(rrt_irecv(rb, n, RRT_BYTE, 0, 1000 + i, RRT_COMM_SELF, &req));
    MP_CALL(rrt_ssend(sb, n, RRT_BYTE, 0, 1000 + i, RRT_COMM_SELF));
    MP_CALL(rrt_wait(&req, &st));
    MP_EXPECT(st.bytes == n, "irecv/ssend on COMM_SELF: %zu bytes, want %zu", st.bytes, n);
    MP_EXPECT_PATTERN(rb, n, seed, "irecv/ssend on COMM_SELF");
  }
  free(sb);
  free(rb);
  return mp_finish("p2p_singleton");
}
