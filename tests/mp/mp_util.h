/*
 * Shared helpers of the multi-process point-to-point suite (tests/mp).
 *
 * Every program follows one shape: mp_init(), checks with MP_EXPECT / MP_CALL, then
 * mp_finish(name), which gathers every rank's failure count to rank 0 over plain
 * point-to-point (no collectives: this suite must not depend on them) and prints
 * "PASS <name>" only when all ranks passed. The runner also requires that line, so a
 * program that exits 0 early does not pass.
 *
 * Data patterns depend on (src, dst, tag, index), so a message delivered to the wrong
 * receive, from the wrong peer or out of order is caught, not only corruption.
 */
#ifndef RRT_TESTS_MP_UTIL_H
#define RRT_TESTS_MP_UTIL_H

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <rrt/rrt.h>

/* Reserved for mp_finish / mp_sync; tests use tags below it. */
#define MP_TAG_FINISH (RRT_TAG_UB)
#define MP_TAG_SYNC (RRT_TAG_UB - 1)

static int mp_rank = -1, mp_size = 0, mp_failures = 0;

static inline void mp_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stdout, "FAIL: [rank %d] %s:%d: ", mp_rank, file, line);
  vfprintf(stdout, fmt, ap);
  fputc('\n', stdout);
  fflush(stdout);
  va_end(ap);
  ++mp_failures;
}

/* A mismatch: reported and counted, the test goes on. */
#define MP_EXPECT(cond, ...) \
  do { if (!(cond)) mp_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)

/* An rrt call that must succeed; continuing after it fails would only hang, so abort the job. */
#define MP_CALL(call)                                                                   \
  do {                                                                                  \
    int mp_rc_ = (call);                                                                \
    if (mp_rc_ != RRT_SUCCESS) {                                                        \
      mp_fail(__FILE__, __LINE__, "%s returned %d (%s)", #call, mp_rc_,                \
              rrt_strerror(mp_rc_) ? rrt_strerror(mp_rc_) : "?");                       \
      rrt_abort(RRT_COMM_WORLD, 1);                                                     \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* An rrt call that must return exactly the given code (error-handling tests). */
#define MP_EXPECT_RC(want, call)                                                        \
  do {                                                                                  \
    int mp_rc_ = (call);                                                                \
    if (mp_rc_ != (want))                                                               \
      mp_fail(__FILE__, __LINE__, "%s returned %d (%s), want %d (%s)", #call, mp_rc_,   \
              rrt_strerror(mp_rc_) ? rrt_strerror(mp_rc_) : "?", (int)(want),          \
              rrt_strerror(want) ? rrt_strerror(want) : "?");                          \
  } while (0)

static inline void mp_init(int *argc, char ***argv) {
  int rc = rrt_init(argc, argv);
  if (rc != RRT_SUCCESS) {
    printf("FAIL: rrt_init returned %d (%s)\n", rc, rrt_strerror(rc) ? rrt_strerror(rc) : "?");
    fflush(stdout);
    exit(1);
  }
  MP_CALL(rrt_comm_rank(RRT_COMM_WORLD, &mp_rank));
  MP_CALL(rrt_comm_size(RRT_COMM_WORLD, &mp_size));
  /* Output of many ranks interleaves: keep every line whole. */
  setvbuf(stdout, NULL, _IOLBF, 0);
}

/* Parses "123", "4K", "64M", "1G" (powers of two, as the config table does). */
static inline int mp_parse_size(const char *s, size_t *out) {
  char *end = NULL;
  unsigned long long v;
  if (!s || !isdigit((unsigned char)*s)) return 0;
  v = strtoull(s, &end, 10);
  switch (*end) {
    case 'k': case 'K': v <<= 10; ++end; break;
    case 'm': case 'M': v <<= 20; ++end; break;
    case 'g': case 'G': v <<= 30; ++end; break;
    default: break;
  }
  if (*end == 'i' || *end == 'I') ++end;
  if (*end == 'b' || *end == 'B') ++end;
  if (*end != '\0') return 0;
  *out = (size_t)v;
  return 1;
}

/* The eager limit to straddle: RRT_EAGER_LIMIT when set to a size, else the assumed 16 KiB
 * (the "auto" value is not visible through the API). */
static inline size_t mp_eager_limit(void) {
  size_t t;
  const char *v = getenv("RRT_EAGER_LIMIT");
  if (v && mp_parse_size(v, &t)) return t;
  return 16384;
}

/* Value of a "--name=SIZE" argument, or def. */
static inline size_t mp_arg_size(int argc, char **argv, const char *name, size_t def) {
  size_t n = strlen(name), v;
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=' && mp_parse_size(argv[i] + n + 1, &v))
      return v;
  return def;
}

static inline int mp_has_arg(int argc, char **argv, const char *name) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], name) == 0) return 1;
  return 0;
}

/* ---- byte patterns ------------------------------------------------------------------------ */
static inline uint64_t mp_mix(uint64_t x) { /* splitmix64 finaliser */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline uint64_t mp_seed(int src, int dst, int tag, uint64_t salt) {
  return mp_mix(((uint64_t)(uint32_t)src << 40) ^ ((uint64_t)(uint32_t)dst << 20) ^
                (uint64_t)(uint32_t)tag ^ mp_mix(salt));
}

/* Byte i of the pattern is byte (i % 8) of mix(seed + i / 8): cheap enough for 64 MiB. */
static inline void mp_fill(void *buf, size_t bytes, uint64_t seed) {
  unsigned char *p = (unsigned char *)buf;
  size_t words = bytes / 8, i;
  for (i = 0; i < words; ++i) {
    uint64_t w = mp_mix(seed + i);
    memcpy(p + 8 * i, &w, 8);
  }
  if (bytes % 8) {
    uint64_t w = mp_mix(seed + words);
    memcpy(p + 8 * words, &w, bytes % 8);
  }
}

/* Index of the first wrong byte, or (size_t)-1 when all match. */
static inline size_t mp_first_mismatch(const void *buf, size_t bytes, uint64_t seed) {
  const unsigned char *p = (const unsigned char *)buf;
  size_t words = bytes / 8, i;
  for (i = 0; i < words; ++i) {
    uint64_t w = mp_mix(seed + i);
    if (memcmp(p + 8 * i, &w, 8) != 0) {
      const unsigned char *q = (const unsigned char *)&w;
      size_t j = 0;
      while (p[8 * i + j] == q[j]) ++j;
      return 8 * i + j;
    }
  }
  if (bytes % 8) {
    uint64_t w = mp_mix(seed + words);
    const unsigned char *q = (const unsigned char *)&w;
    for (size_t j = 0; j < bytes % 8; ++j)
      if (p[8 * words + j] != q[j]) return 8 * words + j;
  }
  return (size_t)-1;
}

/* Checks a received buffer against the pattern; what names the message in the report. */
#define MP_EXPECT_PATTERN(buf, bytes, seed, ...)                                           \
  do {                                                                                     \
    size_t mp_at_ = mp_first_mismatch((buf), (bytes), (seed));                             \
    if (mp_at_ != (size_t)-1) {                                                            \
      char mp_what_[200];                                                                  \
      snprintf(mp_what_, sizeof mp_what_, __VA_ARGS__);                                    \
      mp_fail(__FILE__, __LINE__, "%s: %zu bytes, first wrong byte at %zu", mp_what_,      \
              (size_t)(bytes), mp_at_);                                                    \
    }                                                                                      \
  } while (0)

/* Allocation that must succeed (64 MiB buffers). */
static inline void *mp_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    printf("FAIL: [rank %d] cannot allocate %zu bytes\n", mp_rank, bytes);
    rrt_abort(RRT_COMM_WORLD, 1);
    exit(1);
  }
  return p;
}

/* ---- size classes ------------------------------------------------------------------------- */
#define MP_MAX_CLASSES 24

/* Adds x-1, x, x+1 for a threshold x. */
static inline int mp_add_around(size_t *cand, int n, size_t x) {
  if (x >= 1) cand[n++] = x - 1;
  cand[n++] = x;
  cand[n++] = x + 1;
  return n;
}

/* 0, 1, T-1, T, T+1, 1 MiB and max; plus, when set in the environment, the same around
 * RRT_SHM_CMA_THRESHOLD (copy pipeline -> CMA) and around one and three fragments of
 * RRT_RNDV_COPY_FRAG. Sorted, without duplicates or sizes above max.
 * Returns the number written to out (room for MP_MAX_CLASSES). */
static inline int mp_size_classes(size_t t, size_t max, size_t *out) {
  size_t cand[MP_MAX_CLASSES], x;
  int n = 0, m = 0;
  const char *v;
  cand[n++] = 0;
  cand[n++] = 1;
  n = mp_add_around(cand, n, t);
  cand[n++] = (size_t)1 << 20;
  cand[n++] = max;
  if ((v = getenv("RRT_SHM_CMA_THRESHOLD")) && mp_parse_size(v, &x)) n = mp_add_around(cand, n, x);
  if ((v = getenv("RRT_RNDV_COPY_FRAG")) && mp_parse_size(v, &x) && x > 0) {
    n = mp_add_around(cand, n, x);
    n = mp_add_around(cand, n, 3 * x);
  }
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (cand[j] < cand[i]) { size_t y = cand[i]; cand[i] = cand[j]; cand[j] = y; }
  for (int i = 0; i < n; ++i) {
    if (cand[i] > max) continue;
    if (m > 0 && out[m - 1] == cand[i]) continue;
    out[m++] = cand[i];
  }
  return m;
}

/* ---- synchronisation over point-to-point -------------------------------------------------- */
/* A barrier made of sends to rank 0 and back (linear, fine for <= 16 ranks). */
static inline void mp_sync(void) {
  char c = 0;
  if (mp_rank == 0) {
    for (int i = 1; i < mp_size; ++i)
      MP_CALL(rrt_recv(&c, 1, RRT_BYTE, RRT_ANY_SOURCE, MP_TAG_SYNC, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    for (int i = 1; i < mp_size; ++i)
      MP_CALL(rrt_send(&c, 1, RRT_BYTE, i, MP_TAG_SYNC, RRT_COMM_WORLD));
  } else {
    MP_CALL(rrt_send(&c, 1, RRT_BYTE, 0, MP_TAG_SYNC, RRT_COMM_WORLD));
    MP_CALL(rrt_recv(&c, 1, RRT_BYTE, 0, MP_TAG_SYNC, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
  }
}

/* Gathers failure counts to rank 0, finalizes, runs after_finalize (may be NULL; its
 * failures count on the rank that sees them), prints the verdict; returns the exit code. */
static inline int mp_finish_with(const char *name, void (*after_finalize)(void)) {
  int total = mp_failures;
  if (mp_rank == 0) {
    for (int i = 1; i < mp_size; ++i) {
      int f = 0;
      MP_CALL(rrt_recv(&f, 1, RRT_INT32, i, MP_TAG_FINISH, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
      total += f;
    }
  } else {
    MP_CALL(rrt_send(&total, 1, RRT_INT32, 0, MP_TAG_FINISH, RRT_COMM_WORLD));
  }
  int rc = rrt_finalize();
  if (rc != RRT_SUCCESS) {
    printf("FAIL: [rank %d] rrt_finalize returned %d\n", mp_rank, rc);
    ++total;
    ++mp_failures;
  }
  if (after_finalize) {
    int before = mp_failures;
    after_finalize();
    total += mp_failures - before;
  }
  if (mp_rank == 0) {
    if (total == 0)
      printf("PASS %s (%d ranks)\n", name, mp_size);
    else
      printf("FAIL: %s: %d failure(s) over %d ranks\n", name, total, mp_size);
  }
  fflush(stdout);
  return (mp_failures || (mp_rank == 0 && total)) ? 1 : 0;
}

static inline int mp_finish(const char *name) { return mp_finish_with(name, NULL); }

#endif /* RRT_TESTS_MP_UTIL_H */
