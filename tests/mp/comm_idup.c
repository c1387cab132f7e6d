/*
 * rrt_comm_idup, and context-id agreements that run at the same time. Checks:
 *   - idups pending while the program does blocking dups and splits of other communicators, and
 *     sends on the parent: every new communicator gets its own context (traffic on one is never
 *     received on another);
 *   - overlapping pairs (MPICH's comm_idup_overlap): rank i idups the pair {i, i+1} and then the
 *     pair {i-1, i} before waiting for either; done with blocking dups this would deadlock;
 *   - many idups of one communicator outstanding at once, completed by one waitall;
 *   - bad arguments: null pointers, an invalid communicator.
 * Any number of ranks.
 */
#include "mp_util.h"

#define NIDUP 6

/* One message on each of n communicators to the right neighbour, the tag the same everywhere:
 * each must arrive on its own communicator, carrying the index of that communicator. */
static void check_isolation(rrt_comm_t *comms, int n, const char *what) {
  int right = (mp_rank + 1) % mp_size, left = (mp_rank + mp_size - 1) % mp_size;
  int got[NIDUP + 4], sent[NIDUP + 4];
  rrt_request_t reqs[2 * (NIDUP + 4)];
  for (int i = 0; i < n; ++i) {
    sent[i] = i * 1000 + mp_rank;
    got[i] = -1;
    MP_CALL(rrt_irecv(&got[i], 1, RRT_INT32, left, 5, comms[i], &reqs[i]));
  }
  for (int i = n - 1; i >= 0; --i) MP_CALL(rrt_isend(&sent[i], 1, RRT_INT32, right, 5, comms[i], &reqs[n + i]));
  MP_CALL(rrt_waitall(2 * n, reqs, NULL));
  for (int i = 0; i < n; ++i)
    MP_EXPECT(got[i] == i * 1000 + left, "%s: communicator %d received %d, expected %d", what, i,
              got[i], i * 1000 + left);
}

static void test_with_blocking_creations(void) {
  rrt_comm_t idups[NIDUP];
  rrt_request_t reqs[NIDUP];
  rrt_comm_t dup, split;
  for (int i = 0; i < NIDUP / 2; ++i) {
    idups[i] = 12345;
    MP_CALL(rrt_comm_idup(RRT_COMM_WORLD, &idups[i], &reqs[i]));
  }
  /* blocking creations on world and on a duplicate while the idups run */
  MP_CALL(rrt_comm_dup(RRT_COMM_WORLD, &dup));
  MP_CALL(rrt_comm_split(dup, mp_rank % 2, -mp_rank, &split));
  for (int i = NIDUP / 2; i < NIDUP; ++i) MP_CALL(rrt_comm_idup(dup, &idups[i], &reqs[i]));
  MP_CALL(rrt_waitall(NIDUP, reqs, NULL));
  rrt_comm_t all[NIDUP + 2];
  for (int i = 0; i < NIDUP; ++i) {
    int size = -1;
    MP_CALL(rrt_comm_size(idups[i], &size));
    MP_EXPECT(size == mp_size, "idup %d has %d ranks", i, size);
    all[i] = idups[i];
  }
  all[NIDUP] = dup;
  all[NIDUP + 1] = RRT_COMM_WORLD;
  check_isolation(all, NIDUP + 2, "idups among blocking dups");
  for (int i = 0; i < NIDUP; ++i) MP_CALL(rrt_comm_free(&idups[i]));
  MP_CALL(rrt_comm_free(&split));
  MP_CALL(rrt_comm_free(&dup));
}

/* Rank i is in pair {i, i+1} (its "first") and pair {i-1, i} (its "second"). */
static void test_overlapping_pairs(void) {
  if (mp_size < 3) return;
  rrt_comm_t first = RRT_COMM_NULL, second = RRT_COMM_NULL;
  for (int i = 0; i < mp_size; ++i) {
    rrt_comm_t c;
    int color = RRT_UNDEFINED;
    if (mp_rank == i || mp_rank == (i + 1) % mp_size) color = 0;
    MP_CALL(rrt_comm_split(RRT_COMM_WORLD, color, mp_rank == i ? 0 : 1, &c));
    if (mp_rank == i) first = c;
    else if (mp_rank == (i + 1) % mp_size) second = c;
  }
  rrt_comm_t dups[2];
  rrt_request_t reqs[2];
  MP_CALL(rrt_comm_idup(first, &dups[0], &reqs[0]));
  MP_CALL(rrt_comm_idup(second, &dups[1], &reqs[1]));
  MP_CALL(rrt_waitall(2, reqs, NULL));
  /* in each pair, the lower rank (key 0) sends its world rank to the other */
  for (int k = 0; k < 2; ++k) {
    int me, v = mp_rank;
    MP_CALL(rrt_comm_rank(dups[k], &me));
    if (me == 0) {
      MP_CALL(rrt_send(&v, 1, RRT_INT32, 1, 9, dups[k]));
    } else {
      MP_CALL(rrt_recv(&v, 1, RRT_INT32, 0, 9, dups[k], NULL));
      MP_EXPECT(v == (mp_rank + mp_size - 1) % mp_size, "pair dup: got %d", v);
    }
    MP_CALL(rrt_comm_free(&dups[k]));
  }
  MP_CALL(rrt_comm_free(&first));
  MP_CALL(rrt_comm_free(&second));
}

static void test_errors(void) {
  rrt_comm_t c;
  rrt_request_t r;
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_comm_idup(RRT_COMM_WORLD, NULL, &r));
  MP_EXPECT_RC(RRT_ERR_ARG, rrt_comm_idup(RRT_COMM_WORLD, &c, NULL));
  MP_EXPECT_RC(RRT_ERR_COMM, rrt_comm_idup(12345, &c, &r));
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  test_with_blocking_creations();
  test_overlapping_pairs();
  test_errors();
  mp_finish("comm_idup");
  return 0;
}
