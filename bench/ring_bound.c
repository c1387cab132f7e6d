/* bench/ring_bound: the bus bandwidth a memcpy-bound ring allreduce reaches on this machine.
 *
 * A real ring allreduce of n bytes over p ranks on one node, with no runtime in it: p processes
 * whose buffers all lie in one shared mapping. Every transfer is a memcpy from the left
 * neighbour's buffer (what CMA or a copy through shared memory does, minus the kernel's page
 * pinning and the protocol), done by the receiver in L2-sized segments, each reduced at once
 * into the result by the same auto-vectorised float sum loop rrt's kernels are (-O2,
 * -fvect-cost-model=dynamic). Reduce-scatter: p-1 steps, each copying and reducing one n/p
 * chunk; allgather: p-1 steps, each copying one chunk. A step waits only for its left
 * neighbour's previous step (a flag in shared memory); one barrier separates the phases and
 * the iterations. So per rank: 2(p-1)/p of n copied and (p-1)/p of n reduced, as in any ring.
 *
 * It prints per size the time per allreduce (the median of 5 blocks of -i iterations, each
 * block's average) and the bus bandwidth NCCL defines, busbw = n / t * 2(p-1)/p, in MB/s
 * (10^6 bytes/s), for the best of a few segment sizes. Compare an allreduce's busbw with it
 * (README, Benchmarks). The result is checked (integer-valued floats, exact).
 *
 *   cc -O2 -fvect-cost-model=dynamic -o ring_bound bench/ring_bound.c
 *   ./ring_bound [-p PROCS] [-m MIN:MAX] [-i ITERS]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { kBlocks = 5, kMaxProcs = 64 };

struct shared {
  volatile int step[kMaxProcs * 16];  /* one cache line per rank: steps done this iteration */
  volatile int barrier[2 * 16];       /* arrivals, generation */
  double result[kBlocks];             /* rank 0's block averages */
  volatile int bad;
};

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

/* One allreduce of n floats: in[r] -> out[r] for every r, as rank r. */
static void ring_allreduce(struct shared *sh, float **in, float **out, float *tmp, size_t n,
                           size_t seg, int procs, int r) {
  const int left = (r + procs - 1) % procs;
  const size_t chunk = n / (size_t)procs;
  barrier(sh, procs);
  sh->step[r * 16] = 0;
  barrier(sh, procs);
  for (int s = 0; s < procs - 1; ++s) {
    const size_t k = (size_t)((r - s - 1 + 2 * procs) % procs);
    const size_t len = k == (size_t)procs - 1 ? n - k * chunk : chunk;
    if (s > 0) wait_step(sh, left, s);
    const float *src = (s == 0 ? in[left] : out[left]) + k * chunk;
    const float *mine = in[r] + k * chunk;
    float *dst = out[r] + k * chunk;
    for (size_t o = 0; o < len; o += seg) {
      const size_t m = len - o < seg ? len - o : seg;
      memcpy(tmp, src + o, m * sizeof(float));
      sum(dst + o, mine + o, tmp, m);
    }
    __sync_synchronize();
    sh->step[r * 16] = s + 1;
  }
  barrier(sh, procs);
  for (int t = 0; t < procs - 1; ++t) {
    const size_t k = (size_t)((r - t + procs) % procs);
    const size_t len = k == (size_t)procs - 1 ? n - k * chunk : chunk;
    wait_step(sh, left, procs - 1 + t);
    memcpy(out[r] + k * chunk, out[left] + k * chunk, len * sizeof(float));
    __sync_synchronize();
    sh->step[r * 16] = procs + t;
  }
}

int main(int argc, char **argv) {
  int procs = 2, iters = 20;
  size_t min = 262144, max = 4u << 20;
  int c;
  while ((c = getopt(argc, argv, "p:m:i:h")) != -1) {
    switch (c) {
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
        fprintf(stderr, "usage: %s [-p PROCS] [-m MIN:MAX] [-i ITERS]\n", argv[0]);
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
  float *bufs = mmap(NULL, 2 * (size_t)procs * max, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED || bufs == MAP_FAILED) return 1;
  memset(sh, 0, sizeof *sh);
  float *in[kMaxProcs], *out[kMaxProcs];
  for (int r = 0; r < procs; ++r) {
    in[r] = bufs + (size_t)(2 * r) * maxFloats;
    out[r] = bufs + (size_t)(2 * r + 1) * maxFloats;
  }
  static const size_t kSegs[] = {16384, 65536, 262144};
  printf("# ring allreduce bound, %d processes, float sum: time (us) and busbw (MB/s)\n", procs);
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
        for (size_t i = 0; i < n; ++i) in[r][i] = (float)(r + 1);
        for (int w = 0; w < 3; ++w) ring_allreduce(sh, in, out, tmp, n, seg, procs, r);
        for (int b = 0; b < kBlocks; ++b) {
          barrier(sh, procs);
          const double t0 = now();
          for (int i = 0; i < iters; ++i) ring_allreduce(sh, in, out, tmp, n, seg, procs, r);
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
