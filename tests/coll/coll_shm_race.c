/* Back-to-back blocking allreduces, reduces, reduce-scatters, allgathers, alltoalls and bcasts
 * whose inputs change with every call, meant for the shared-memory algorithms
 * (runtime/coll/shm_reduction.h, allgather_shm.cc, alltoall_shm.cc, bcast_shm.cc) with
 * tiny slots (RRT_COLL_SHM_SLOT,
 * so that every call has many pieces and each slot buffer is reused within a few pieces) and
 * more ranks than cores, with ranks that stop now and then (yield or sleep). A piece read
 * before its writer finished it, or a buffer written again while a peer still reads it, gives
 * a wrong integer sum, which every rank checks exactly. Calls alternate between COMM_WORLD and
 * a split communicator (two segments in use at once), allreduce and reduce (to a root that
 * changes), in place and not, with sizes that change every call; float16 sums of small
 * integers (exact) check another element size.
 *
 * With --alloc=all the buffers come from rrt_alloc_mem on every rank (peers read them where they
 * lie: no copy-in, and with RRT_COLL_SHM_SHARED_OUTPUT=0 the allreduce result too), with
 * --alloc=even on even ranks only (shared and private buffers in one call). A rank refills its
 * input as soon as a call returns, so one that returned while a peer still read its buffers
 * gives a wrong sum.
 *
 *   coll_shm_race [ITERATIONS] [--alloc=all|even]   (default 400, malloc)
 * Prints "PASS coll_shm_race" on rank 0, "FAIL ..." lines otherwise. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rrt/rrt.h>

/* Every call runs even after a failure (the ranks' calls must stay matched); 5 lines at most. */
#define FAIL(...)                          \
  do {                                     \
    if (failures++ < 5) {                  \
      printf("FAIL rank %d: ", rank);      \
      printf(__VA_ARGS__);                 \
      printf("\n");                        \
      fflush(stdout);                      \
    }                                      \
  } while (0)

static int rank, failures;

/* Same sequence on every rank: the sizes. */
static uint32_t next(uint32_t* s) {
  *s = *s * 1103515245u + 12345u;
  return *s >> 8;
}

static void pause_now_and_then(uint32_t* s) {
  const uint32_t r = next(s) % 16;
  if (r == 0) {
    struct timespec ts = {0, (long)(next(s) % 200) * 1000};
    nanosleep(&ts, NULL);
  } else if (r < 4) {
    sched_yield();
  }
}

/* float16 encoding of a small non-negative integer (exact below 2048). */
static uint16_t half_of(unsigned v) {
  if (v == 0) return 0;
  int e = 31 - __builtin_clz(v);
  unsigned mant = (v << (10 - e)) & 0x3ff;
  return (uint16_t)(((e + 15) << 10) | mant);
}

/* root < 0: allreduce; else reduce to root % size (checked there). */
static int check_int64(rrt_comm_t comm, int it, size_t count, int in_place, int root, int64_t* in,
                       int64_t* out) {
  int r, p;
  rrt_comm_rank(comm, &r);
  rrt_comm_size(comm, &p);
  if (root >= 0) root %= p;
  for (size_t i = 0; i < count; i++) in[i] = (int64_t)r * 1000003 + (int64_t)it * 31 + (int64_t)i;
  int rc;
  const int gets = root < 0 || root == r;
  if (in_place && gets) {
    memcpy(out, in, count * sizeof *in);
    rc = root < 0 ? rrt_allreduce(RRT_IN_PLACE, out, count, RRT_INT64, RRT_SUM, comm)
                  : rrt_reduce(RRT_IN_PLACE, out, count, RRT_INT64, RRT_SUM, root, comm);
  } else {
    rc = root < 0 ? rrt_allreduce(in, out, count, RRT_INT64, RRT_SUM, comm)
                  : rrt_reduce(in, gets ? out : NULL, count, RRT_INT64, RRT_SUM, root, comm);
  }
  if (rc != RRT_SUCCESS) {
    FAIL("call %d: %s returned %d", it, root < 0 ? "rrt_allreduce" : "rrt_reduce", rc);
    return 1;
  }
  if (!gets) return 0;
  const int64_t ranks = (int64_t)p * (p - 1) / 2 * 1000003;
  for (size_t i = 0; i < count; i++) {
    const int64_t want = ranks + (int64_t)p * ((int64_t)it * 31 + (int64_t)i);
    if (out[i] != want) {
      FAIL("call %d (%s, %zu int64, %s, %d ranks): element %zu is %lld, want %lld", it,
           root < 0 ? "allreduce" : "reduce", count, in_place ? "in place" : "out of place", p, i,
           (long long)out[i], (long long)want);
      return 1;
    }
  }
  return 0;
}

static int check_half(rrt_comm_t comm, int it, size_t count, uint16_t* in, uint16_t* out) {
  int r, p;
  rrt_comm_rank(comm, &r);
  rrt_comm_size(comm, &p);
  for (size_t i = 0; i < count; i++) in[i] = half_of((unsigned)((r + it + i) % 64));
  if (rrt_allreduce(in, out, count, RRT_FLOAT16, RRT_SUM, comm) != RRT_SUCCESS) {
    FAIL("call %d: float16 rrt_allreduce failed", it);
    return 1;
  }
  for (size_t i = 0; i < count; i++) {
    unsigned want = 0;
    for (int q = 0; q < p; q++) want += (unsigned)((q + it + i) % 64);
    if (out[i] != half_of(want)) {
      FAIL("call %d (%zu float16): element %zu is 0x%04x, want 0x%04x", it, count, i, out[i],
           half_of(want));
      return 1;
    }
  }
  return 0;
}

static int check_allgather(rrt_comm_t comm, int it, size_t count, int in_place, int64_t* in,
                           int64_t* out) {
  int r, p;
  rrt_comm_rank(comm, &r);
  rrt_comm_size(comm, &p);
  const size_t block = count / (size_t)p + 1;
  int64_t* mine = in_place ? out + (size_t)r * block : in;
  for (size_t i = 0; i < block; i++) mine[i] = (int64_t)r * 1000003 + (int64_t)it * 31 + (int64_t)i;
  const int rc = rrt_allgather(in_place ? RRT_IN_PLACE : in, block, RRT_INT64, out, block, RRT_INT64, comm);
  if (rc != RRT_SUCCESS) {
    FAIL("call %d: rrt_allgather returned %d", it, rc);
    return 1;
  }
  for (int q = 0; q < p; q++)
    for (size_t i = 0; i < block; i++) {
      const int64_t want = (int64_t)q * 1000003 + (int64_t)it * 31 + (int64_t)i;
      if (out[(size_t)q * block + i] != want) {
        FAIL("call %d (allgather, %zu int64 per rank, %d ranks): rank %d's element %zu is %lld, want %lld",
             it, block, p, q, i, (long long)out[(size_t)q * block + i], (long long)want);
        return 1;
      }
    }
  return 0;
}

static int check_alltoall(rrt_comm_t comm, int it, size_t count, int in_place, int64_t* in,
                          int64_t* out) {
  int r, p;
  rrt_comm_rank(comm, &r);
  rrt_comm_size(comm, &p);
  const size_t block = count / (size_t)p + 1;
  int64_t* send = in_place ? out : in;
  for (int q = 0; q < p; q++) /* block q is bound for rank q */
    for (size_t i = 0; i < block; i++)
      send[(size_t)q * block + i] = (int64_t)r * 1000003 + (int64_t)q * 7919 + (int64_t)it * 31 + (int64_t)i;
  const int rc = rrt_alltoall(in_place ? RRT_IN_PLACE : in, block, RRT_INT64, out, block, RRT_INT64, comm);
  if (rc != RRT_SUCCESS) {
    FAIL("call %d: rrt_alltoall returned %d", it, rc);
    return 1;
  }
  for (int q = 0; q < p; q++)
    for (size_t i = 0; i < block; i++) {
      const int64_t want = (int64_t)q * 1000003 + (int64_t)r * 7919 + (int64_t)it * 31 + (int64_t)i;
      if (out[(size_t)q * block + i] != want) {
        FAIL("call %d (alltoall, %zu int64 per block, %d ranks): block from rank %d, element %zu is %lld, want %lld",
             it, block, p, q, i, (long long)out[(size_t)q * block + i], (long long)want);
        return 1;
      }
    }
  return 0;
}

/* Uneven receive counts; in place every other call. */
static int check_reduce_scatter(rrt_comm_t comm, int it, size_t count, int in_place, int64_t* in,
                                int64_t* out) {
  int r, p;
  rrt_comm_rank(comm, &r);
  rrt_comm_size(comm, &p);
  size_t counts[64], total = 0, mine = 0;
  if (p > 64) return 0; /* the same on every rank of comm */
  for (int q = 0; q < p; q++) {
    counts[q] = count / (size_t)p + (size_t)((q + it) % 3);
    if (q == r) mine = total;
    total += counts[q];
  }
  int64_t* send = in_place ? out : in;
  for (size_t i = 0; i < total; i++) send[i] = (int64_t)r * 7 + (int64_t)it * 31 + (int64_t)i;
  const int rc = rrt_reduce_scatter(in_place ? RRT_IN_PLACE : in, out, counts, RRT_INT64, RRT_SUM, comm);
  if (rc != RRT_SUCCESS) {
    FAIL("call %d: rrt_reduce_scatter returned %d", it, rc);
    return 1;
  }
  for (size_t i = 0; i < counts[r]; i++) {
    const int64_t want = (int64_t)7 * p * (p - 1) / 2 + (int64_t)p * ((int64_t)it * 31 + (int64_t)(mine + i));
    if (out[i] != want) {
      FAIL("call %d (reduce_scatter, %zu int64 here, %d ranks): element %zu is %lld, want %lld", it,
           counts[r], p, i, (long long)out[i], (long long)want);
      return 1;
    }
  }
  return 0;
}

/* A bcast of count int64 from a root that changes; receivers' buffers hold a stale pattern. */
static int check_bcast(rrt_comm_t comm, int it, size_t count, int root, int64_t* buf) {
  int r, p;
  rrt_comm_rank(comm, &r);
  rrt_comm_size(comm, &p);
  root %= p;
  for (size_t i = 0; i < count; i++)
    buf[i] = r == root ? (int64_t)it * 1000003 + (int64_t)i : -1 - (int64_t)i;
  const int rc = rrt_bcast(buf, count, RRT_INT64, root, comm);
  if (rc != RRT_SUCCESS) {
    FAIL("call %d: rrt_bcast returned %d", it, rc);
    return 1;
  }
  for (size_t i = 0; i < count; i++)
    if (buf[i] != (int64_t)it * 1000003 + (int64_t)i) {
      FAIL("call %d (bcast, %zu int64 from %d, %d ranks): element %zu is %lld", it, count, root, p, i,
           (long long)buf[i]);
      return 1;
    }
  return 0;
}

/* A buffer of bytes from malloc, or from rrt_alloc_mem when shared. */
static void* buffer(size_t bytes, int shared) {
  void* p = NULL;
  if (!shared) return malloc(bytes);
  return rrt_alloc_mem(bytes, &p) == RRT_SUCCESS ? p : NULL;
}

static void release(void* p, int shared) {
  if (!shared) {
    free(p);
  } else if (rrt_free_mem(p) != RRT_SUCCESS) {
    FAIL("rrt_free_mem");
  }
}

int main(int argc, char** argv) {
  int iterations = 400;
  const char* alloc = "none";
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--alloc=", 8) == 0)
      alloc = argv[i] + 8;
    else
      iterations = atoi(argv[i]);
  }
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  int size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  rrt_comm_t half;
  if (rrt_comm_split(RRT_COMM_WORLD, rank % 2, rank, &half) != RRT_SUCCESS) return 1;

  const size_t max_count = 40000;
  /* allgather, alltoall, reduce-scatter: p blocks of at most count/p + 2 */
  const int shared = strcmp(alloc, "all") == 0 || (strcmp(alloc, "even") == 0 && rank % 2 == 0);
  int64_t* in = buffer((max_count + 128) * sizeof *in, shared);
  int64_t* out = buffer((max_count + 128) * sizeof *out, shared);
  if (!in || !out) {
    printf("FAIL rank %d: no buffers\n", rank);
    return 1;
  }
  uint32_t sizes = 12345, pauses = 777u + (uint32_t)rank;
  for (int it = 0; it < iterations; it++) {
    /* The first call small: a segment of small slots first, replaced by the first large call. */
    const size_t count = it == 0 ? 1 : 1 + next(&sizes) % max_count;
    const rrt_comm_t comm = it % 3 == 2 ? half : RRT_COMM_WORLD;
    pause_now_and_then(&pauses);
    if (it % 5 == 4)
      check_half(comm, it, count, (uint16_t*)in, (uint16_t*)out);
    else if (it % 10 == 2)
      check_allgather(comm, it, count, it % 4 == 0, in, out);
    else if (it % 10 == 7)
      check_alltoall(comm, it, count, it % 4 == 3, in, out);
    else if (it % 10 == 5)
      check_bcast(comm, it, count, (int)(next(&sizes) % 64), it % 4 == 1 ? in : out);
    else if (it % 5 == 3)
      check_reduce_scatter(comm, it, count, it % 2 == 0, in, out);
    else
      check_int64(comm, it, count, it % 4 == 1, it % 3 == 1 ? (int)(next(&sizes) % 64) : -1, in, out);
  }
  int bad = failures, total = 0;
  rrt_allreduce(&bad, &total, 1, RRT_INT32, RRT_SUM, RRT_COMM_WORLD);
  if (rank == 0 && total == 0) printf("PASS coll_shm_race (%d ranks)\n", size);
  release(in, shared);
  release(out, shared);
  rrt_comm_free(&half);
  rrt_finalize();
  return total ? 1 : 0;
}
