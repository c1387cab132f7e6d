/* LD_PRELOAD shim for steady_allocs.sh: counts the heap allocations a rank makes (malloc,
 * calloc, realloc, aligned allocations; C++'s operator new comes through malloc) and, at exit,
 * writes the count to $RRT_ALLOC_COUNT_DIR/rank.$PMIX_RANK. Processes without PMIX_RANK (rrun,
 * the shell of a libtool wrapper) write nothing. glibc only: the real allocator is reached
 * through its __libc_* entry points, so no dlsym (which itself allocates) is needed. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);

static unsigned long long allocs;

void* malloc(size_t n) {
  __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
  return __libc_malloc(n);
}
void* calloc(size_t k, size_t n) {
  __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
  return __libc_calloc(k, n);
}
void* realloc(void* p, size_t n) {
  __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
  return __libc_realloc(p, n);
}
int posix_memalign(void** out, size_t align, size_t n) {
  __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
  void* p = __libc_memalign(align, n);
  if (!p) return 12; /* ENOMEM */
  *out = p;
  return 0;
}
void* aligned_alloc(size_t align, size_t n) {
  __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
  return __libc_memalign(align, n);
}
void* memalign(size_t align, size_t n) {
  __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
  return __libc_memalign(align, n);
}

__attribute__((destructor)) static void report(void) {
  const char* dir = getenv("RRT_ALLOC_COUNT_DIR");
  const char* rank = getenv("PMIX_RANK");
  if (!dir || !rank) return;
  char path[4096];
  snprintf(path, sizeof path, "%s/rank.%s", dir, rank);
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "%llu\n", __atomic_load_n(&allocs, __ATOMIC_RELAXED));
  fclose(f);
}
