/* bench/memcpy_bw: the memcpy bandwidth that bounds a shared-memory ring collective.
 *
 * A ring allreduce on one node moves 2(p-1)/p of the data through each rank by copies (CMA or
 * copy-in/copy-out), so its bus bandwidth (NCCL's busbw = size / time * 2(p-1)/p) cannot exceed
 * the bandwidth at which each rank copies while the others copy too. This program measures
 * exactly that: N processes (-p, default 2) each memcpy a SIZE-byte buffer into another, at once,
 * and it prints per size the median per-process bandwidth in MB/s (10^6 bytes/s).
 *
 *   cc -O2 -o memcpy_bw bench/memcpy_bw.c && ./memcpy_bw [-p PROCS] [-m MIN:MAX] [-i ITERS]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int procs = 2, iters = 20;
  size_t min = 65536, max = 64u << 20;
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
  if (procs < 1 || iters < 1 || min == 0 || min > max) {
    fprintf(stderr, "memcpy_bw: bad arguments\n");
    return 1;
  }
  /* One result slot per process per size, in shared memory; a spin barrier starts each size. */
  int nsizes = 0;
  for (size_t s = min; s <= max; s *= 2) ++nsizes;
  double *res = mmap(NULL, sizeof(double) * (size_t)(procs * nsizes) + 64, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  volatile int *arrived = (volatile int *)(res + procs * nsizes);
  if (res == MAP_FAILED) return 1;
  *arrived = 0;
  for (int p = 0; p < procs; ++p) {
    if (fork() == 0) {
      char *src = malloc(max), *dst = malloc(max);
      if (!src || !dst) _exit(1);
      memset(src, 1, max);
      memset(dst, 2, max);
      int k = 0;
      for (size_t s = min; s <= max; s *= 2, ++k) {
        __sync_fetch_and_add(arrived, 1);
        while (*arrived < procs * (k + 1)) sched_yield();
        double t[1000];
        int n = iters > 1000 ? 1000 : iters;
        for (int i = 0; i < n; ++i) {
          double t0 = now();
          memcpy(dst, src, s);
          t[i] = now() - t0;
          src[i % s] ^= dst[(i * 7) % s]; /* keep the copies observable */
        }
        qsort(t, (size_t)n, sizeof t[0], cmp);
        res[k * procs + p] = (double)s / t[n / 2] / 1e6;
      }
      _exit(0);
    }
  }
  int status, failed = 0;
  while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status);
  if (failed) return 1;
  printf("# memcpy, %d processes at once: per-process bandwidth (MB/s), median of %d\n", procs, iters);
  printf("%-10s%20s\n", "# Size", "Bandwidth (MB/s)");
  int k = 0;
  for (size_t s = min; s <= max; s *= 2, ++k) {
    double v[256];
    int n = procs > 256 ? 256 : procs;
    for (int p = 0; p < n; ++p) v[p] = res[k * procs + p];
    qsort(v, (size_t)n, sizeof v[0], cmp);
    printf("%-10zu%20.2f\n", s, v[n / 2]);
  }
  return 0;
}
