#include "runtime/memory/release_hooks.h"

#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <mutex>

#include "runtime/memory/reg_cache.h"

namespace rrt::memory {
namespace {

std::atomic<int> gListenerCount{0};
std::atomic<uint64_t> gEvents{0};
std::mutex gListenersMu;
RegCache* gListeners[kMaxReleaseListeners] = {};

}  // namespace

void addReleaseListener(RegCache* cache) {
  std::lock_guard<std::mutex> g(gListenersMu);
  for (RegCache*& slot : gListeners)
    if (!slot) {
      slot = cache;
      gListenerCount.fetch_add(1, std::memory_order_release);
      break;
    }
  // From now on free() keeps pages mapped (see release_hooks.h). Not undone on removal: memory
  // malloc holds may still be cached by a later cache.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
}

void removeReleaseListener(RegCache* cache) {
  std::lock_guard<std::mutex> g(gListenersMu);
  for (RegCache*& slot : gListeners)
    if (slot == cache) {
      slot = nullptr;
      gListenerCount.fetch_sub(1, std::memory_order_release);
    }
}

void releaseRange(const void* addr, size_t len) {
  if (gListenerCount.load(std::memory_order_relaxed) == 0 || len == 0) return;
  gEvents.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> g(gListenersMu);
  for (RegCache* c : gListeners)
    if (c) c->invalidate(reinterpret_cast<uintptr_t>(addr), len);
}

uint64_t releaseEvents() { return gEvents.load(std::memory_order_relaxed); }

}  // namespace rrt::memory

// ---- the hooks: exported from librrt so that the dynamic linker binds callers to them ------

namespace {

template <typename Fn>
Fn nextSymbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

#define RRT_HOOK extern "C" __attribute__((visibility("default")))

RRT_HOOK int munmap(void* addr, size_t len) noexcept {
  rrt::memory::releaseRange(addr, len);
  using Fn = int (*)(void*, size_t);
  static Fn real = nextSymbol<Fn>("munmap");
  if (real) return real(addr, len);
  return static_cast<int>(syscall(SYS_munmap, addr, len));
}

RRT_HOOK void* mremap(void* old, size_t oldLen, size_t newLen, int flags, ...) noexcept {
  void* newAddr = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    newAddr = va_arg(ap, void*);
    va_end(ap);
  }
  // The old range loses its pages (moved or shrunk); invalidating all of it is conservative.
  rrt::memory::releaseRange(old, oldLen);
  if (newAddr) rrt::memory::releaseRange(newAddr, newLen);
  using Fn = void* (*)(void*, size_t, size_t, int, ...);
  static Fn real = nextSymbol<Fn>("mremap");
  if (real) return (flags & MREMAP_FIXED) ? real(old, oldLen, newLen, flags, newAddr)
                                          : real(old, oldLen, newLen, flags);
  return reinterpret_cast<void*>(syscall(SYS_mremap, old, oldLen, newLen, flags, newAddr));
}

RRT_HOOK int madvise(void* addr, size_t len, int advice) noexcept {
  if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE)
    rrt::memory::releaseRange(addr, len);
  using Fn = int (*)(void*, size_t, int);
  static Fn real = nextSymbol<Fn>("madvise");
  if (real) return real(addr, len, advice);
  return static_cast<int>(syscall(SYS_madvise, addr, len, advice));
}
