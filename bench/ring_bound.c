/* bench/ring_bound: the bus bandwidth a memcpy-bound ring allreduce reaches on this machine.
 *
 * A real ring allreduce of n bytes over p ranks on one node, with no runtime in it. Reduce-
 * scatter: p-1 steps, each moving and reducing one n/p chunk; allgather: p-1 steps, each moving
 * one chunk. A step waits only for its left neighbour's previous step (a flag in shared memory);
 * one barrier separates the phases and the iterations. So per rank: 2(p-1)/p of n moved and
 * (p-1)/p of n reduced, as in any ring. The float sum is the same auto-vectorised loop rrt's
 * kernels are (-O2, -fvect-cost-model=dynamic). How a chunk moves (-b):
 *
 *   shared   (default) every rank's buffers lie in one shared mapping (what rrt_alloc_mem
 *            gives): the receiver reduces straight from its left neighbour's buffer, in
 *            L2-sized segments, and copies from it in the allgather. The bound for buffers
 *            peers can map. (Before 2026-12-07 the receiver copied each segment into an L2
 *            buffer first and reduced from there: 1.1-1.5x slower from 256K at 2 ranks.)
 *   staged   private buffers (malloc): what a rank sends goes through its staging buffer in
 *            shared memory, the receiver reduces or copies straight from there. The reduce-
 *            scatter's partial sums are written into the staging buffer by the reduction itself,
 *            so the extra copies are the first chunk's, the final chunk's and every allgather
 *            step's: the least a ring over private buffers moves without the kernel.
 *   cma      private buffers: the receiver reads its left neighbour's buffer by
 *            process_vm_readv (one copy, by the kernel, which pins every page), in segments
 *            into an L2-sized buffer for the reduce-scatter, a whole chunk at once for the
 *            allgather.
 *
 * The better of staged and cma is the bound for private buffers (README, Benchmarks).
 *
 * It prints per size the time per allreduce (the median of 5 blocks of -i iterations, each
 * block's average) and the bus bandwidth NCCL defines, busbw = n / t * 2(p-1)/p, in MB/s
 * (10^6 bytes/s), for the best of a few segment sizes. Compare an allreduce's busbw with it
 * (README, Benchmarks). The result is checked (integer-valued floats, exact).
 *
 *   cc -O2 -fvect-cost-model=dynamic -o ring_bound bench/ring_bound.c
 *   ./ring_bound [-p PROCS] [-m MIN:MAX] [-i ITERS] [-b shared|staged|cma]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kBlocks = 5, kMaxProcs = 64 };

struct shared {
  volatile int step[kMaxProcs * 16];  /* one cache line per rank: steps done this iteration */
  volatile int barrier[2 * 16];       /* arrivals, generation */
  double result[kBlocks];             /* rank 0's block averages */
  volatile int bad;
  pid_t pid[kMaxProcs];               /* cma: where each rank's private buffers lie */
  float *in[kMaxProcs], *out[kMaxProcs];
};

enum mode { kShared, kStaged, kCma };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void barrier(struct shared *sh, int procs) {
  int gen = sh->barrier[16];
  if (__sync_add_and_fetch(&sh->barrier[0], 1) == procs) {
    sh->barrier[0] = 0;
    __sync_synchronize();
    sh->barrier[16] = gen + 1;
  } else {
    while (sh->barrier[16] == gen) sched_yield();
  }
}

static void wait_step(struct shared *sh, int rank, int s) {
  while (sh->step[rank * 16] < s) sched_yield();
  __sync_synchronize();
}

static void sum(float *restrict out, const float *restrict a, const float *restrict b, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

/* cma: n floats of rank r's memory at remote into local. */
static void cma_read(struct shared *sh, int r, float *local, const float *remote, size_t n) {
  struct iovec l = {local, n * sizeof(float)}, rv = {(void *)remote, n * sizeof(float)};
  if (process_vm_readv(sh->pid[r], &l, 1, &rv, 1, 0) != (ssize_t)(n * sizeof(float))) sh->bad = 1;
}

/* One allreduce of n floats: in[r] -> out[r] for every r, as rank r. stage[j] (staged): rank
 * j's staging buffer, 2(p-1) chunks of (n - (p-1) n/p) floats, chunk i for its step i. */
static void ring_allreduce(struct shared *sh, enum mode mode, float **in, float **out,
                           float **stage, float *tmp, size_t n, size_t seg, int procs, int r) {
  const int left = (r + procs - 1) % procs;
  const size_t chunk = n / (size_t)procs, slot = n - (size_t)(procs - 1) * chunk;
  barrier(sh, procs);
  sh->step[r * 16] = 0;
  if (mode == kStaged) /* what the right neighbour reduces first: the own input's own chunk */
    memcpy(stage[r], in[r] + (size_t)r * chunk,
           (r == procs - 1 ? slot : chunk) * sizeof(float));
  barrier(sh, procs);
  for (int s = 0; s < procs - 1; ++s) {
    const size_t k = (size_t)((r - s - 1 + 2 * procs) % procs);
    const size_t len = k == (size_t)procs - 1 ? n - k * chunk : chunk;
    if (s > 0) wait_step(sh, left, s);
    const float *src = mode == kStaged ? stage[left] + (size_t)s * slot
                                       : (s == 0 ? in[left] : out[left]) + k * chunk;
    const float *mine = in[r] + k * chunk;
    const int last = s == procs - 2;
    /* staged: a partial sum goes straight to the staging buffer, the final one to the output
     * (and from there, still in cache, to the staging buffer for the allgather) */
    float *dst = mode == kStaged && !last ? stage[r] + (size_t)(s + 1) * slot : out[r] + k * chunk;
    for (size_t o = 0; o < len; o += seg) {
      const size_t m = len - o < seg ? len - o : seg;
      if (mode == kCma) {
        cma_read(sh, left, tmp, src + o, m);
        sum(dst + o, mine + o, tmp, m);
      } else {
        sum(dst + o, mine + o, src + o, m);
        if (last && mode == kStaged)
          memcpy(stage[r] + (size_t)(s + 1) * slot + o, dst + o, m * sizeof(float));
      }
    }
    __sync_synchronize();
    sh->step[r * 16] = s + 1;
  }
  barrier(sh, procs);
  for (int t = 0; t < procs - 1; ++t) {
    const size_t k = (size_t)((r - t + procs) % procs);
    const size_t len = k == (size_t)procs - 1 ? n - k * chunk : chunk;
    wait_step(sh, left, procs - 1 + t);
    float *dst = out[r] + k * chunk;
    if (mode == kCma) {
      cma_read(sh, left, dst, out[left] + k * chunk, len);
    } else if (mode == kStaged) {
      const float *src = stage[left] + (size_t)(procs - 1 + t) * slot;
      memcpy(dst, src, len * sizeof(float));
      if (t < procs - 2)  /* forwarded at the next step */
        memcpy(stage[r] + (size_t)(procs + t) * slot, src, len * sizeof(float));
    } else {
      memcpy(dst, out[left] + k * chunk, len * sizeof(float));
    }
    __sync_synchronize();
    sh->step[r * 16] = procs + t;
  }
}

int main(int argc, char **argv) {
  int procs = 2, iters = 20;
  size_t min = 262144, max = 4u << 20;
  enum mode mode = kShared;
  static const char *const kModeNames[] = {"shared", "staged", "cma"};
  int c;
  while ((c = getopt(argc, argv, "p:m:i:b:h")) != -1) {
    switch (c) {
      case 'b':
        for (mode = kShared; mode <= kCma && strcmp(optarg, kModeNames[mode]) != 0; ++mode) {
        }
        if (mode > kCma) {
          fprintf(stderr, "ring_bound: -b shared, staged or cma\n");
          return 1;
        }
        break;
      case 'p': procs = atoi(optarg); break;
      case 'i': iters = atoi(optarg); break;
      case 'm':
        if (strchr(optarg, ':')) {
          min = strtoull(optarg, NULL, 0);
          max = strtoull(strchr(optarg, ':') + 1, NULL, 0);
        } else {
          max = strtoull(optarg, NULL, 0);
        }
        break;
      default:
        fprintf(stderr, "usage: %s [-p PROCS] [-m MIN:MAX] [-i ITERS] [-b shared|staged|cma]\n", argv[0]);
        return c == 'h' ? 0 : 1;
    }
  }
  if (procs < 2 || procs > kMaxProcs || iters < 1 || min < 4 * (size_t)procs || min > max) {
    fprintf(stderr, "ring_bound: bad arguments (2 <= -p <= %d, sizes of at least 4 bytes a rank)\n",
            kMaxProcs);
    return 1;
  }
  const size_t maxFloats = max / sizeof(float);
  struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                           -1, 0);
  /* shared: every rank's input and output; staged: every rank's staging buffer */
  const size_t stageFloats = 2 * (size_t)(procs - 1) * (maxFloats - (size_t)(procs - 1) * (maxFloats / (size_t)procs));
  const size_t perRank = mode == kShared ? 2 * maxFloats : mode == kStaged ? stageFloats : 1;
  float *bufs = mmap(NULL, (size_t)procs * perRank * sizeof(float), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED || bufs == MAP_FAILED) return 1;
  memset(sh, 0, sizeof *sh);
  float *in[kMaxProcs], *out[kMaxProcs], *stage[kMaxProcs];
  for (int r = 0; r < procs; ++r) {
    in[r] = bufs + (size_t)(2 * r) * maxFloats;
    out[r] = bufs + (size_t)(2 * r + 1) * maxFloats;
    stage[r] = bufs + (size_t)r * stageFloats;
  }
  static const size_t kSegs[] = {16384, 65536, 262144};
  printf("# ring allreduce bound, %d processes, %s, float sum: time (us) and busbw (MB/s)\n",
         procs, mode == kShared ? "shared buffers" : mode == kStaged ? "private buffers, staged" : "private buffers, cma");
  printf("%-10s%14s%16s%12s\n", "# Size", "Time (us)", "busbw (MB/s)", "segment");
  for (size_t size = min; size <= max; size *= 2) {
    const size_t n = size / sizeof(float);
    double best = 0;
    size_t bestSeg = 0;
    for (size_t si = 0; si < sizeof kSegs / sizeof kSegs[0]; ++si) {
      const size_t seg = kSegs[si] / sizeof(float);
      for (int r = 0; r < procs; ++r) {
        pid_t pid = fork();
        if (pid < 0) return 1;
        if (pid > 0) continue;
        /* As rrun binds ranks (core i mod cores) when they do not outnumber the cores. */
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (cores > 0 && procs <= cores) {
          cpu_set_t set;
          CPU_ZERO(&set);
          CPU_SET(r, &set);
          sched_setaffinity(0, sizeof set, &set);
        }
        float *tmp = malloc(kSegs[si]);
        if (!tmp) _exit(1);
        if (mode != kShared) {  /* private: this rank's own, published for cma */
          in[r] = malloc(max);
          out[r] = malloc(max);
          if (!in[r] || !out[r]) _exit(1);
          memset(out[r], 0, max);
          sh->pid[r] = getpid();
          sh->in[r] = in[r];
          sh->out[r] = out[r];
          barrier(sh, procs);
          for (int j = 0; j < procs; ++j) {
            in[j] = sh->in[j];  /* a peer's: read by cma only, never dereferenced */
            out[j] = sh->out[j];
          }
        }
        for (size_t i = 0; i < n; ++i) in[r][i] = (float)(r + 1);
        for (int w = 0; w < 3; ++w) ring_allreduce(sh, mode, in, out, stage, tmp, n, seg, procs, r);
        for (int b = 0; b < kBlocks; ++b) {
          barrier(sh, procs);
          const double t0 = now();
          for (int i = 0; i < iters; ++i) ring_allreduce(sh, mode, in, out, stage, tmp, n, seg, procs, r);
          barrier(sh, procs);
          if (r == 0) sh->result[b] = (now() - t0) / iters;
        }
        const float want = (float)(procs * (procs + 1) / 2);
        for (size_t i = 0; i < n; ++i)
          if (out[r][i] != want) sh->bad = 1;
        _exit(0);
      }
      int status, failed = 0;
      while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status);
      if (failed || sh->bad) {
        fprintf(stderr, "ring_bound: a rank failed or the result is wrong\n");
        return 1;
      }
      double t[kBlocks];
      memcpy(t, sh->result, sizeof t);
      qsort(t, kBlocks, sizeof t[0], cmp);
      const double busbw = (double)size / t[kBlocks / 2] * 2.0 * (procs - 1) / procs / 1e6;
      if (busbw > best) {
        best = busbw;
        bestSeg = kSegs[si];
      }
    }
    const double us = (double)size / (best * 1e6 / (2.0 * (procs - 1) / procs)) * 1e6;
    printf("%-10zu%14.2f%16.2f%12zu\n", size, us, best, bestSeg);
  }
  return 0;
}
