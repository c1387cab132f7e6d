// Registration cache: memory registrations reused across messages, bounded, LRU-evicted, and
// invalidated when the application releases the memory (release_hooks.h).
//
// Why: registering memory with an RDMA NIC pins pages and costs a system call (tens of us per
// MiB); a rendezvous that registers and deregisters its buffer every time is dominated by it.
// Why invalidation: a registration pins the physical pages that backed the range when it was
// made. If the application frees the range back to the OS and maps new memory at the same
// virtual address, a cached registration would make the NIC read the old pages: stale data.
//
// The scheme (see release_hooks.h for the reasoning):
//   - every range that leaves the address space or changes its pages (munmap, mremap,
//     madvise(DONTNEED/FREE/REMOVE)) calls invalidate() on every live cache, through the hooks;
//   - malloc is told never to give memory back (M_MMAP_MAX = 0, M_TRIM_THRESHOLD = -1) while a
//     cache is live, so free() keeps the pages mapped and a reused heap address keeps its pages.
//
// Contract:
//   get(addr, len)   returns a registration covering [addr, addr+len) with one more reference:
//                    a hit when a valid cached entry covers it (no system call), else a new
//                    registration of the page-aligned range through the domain. Ok or the
//                    domain's error.
//   put(entry)       drops the reference. Entries with no reference stay cached (LRU) until
//                    evicted by the bounds (maxEntries, maxBytes) or invalidated.
//   invalidate(a,l)  may run from any thread, also inside the hooks: it only marks entries dead
//                    and unlinks them, calling nothing outside; dead entries are deregistered at
//                    the next get/put/purge from the owner's thread (and only when unreferenced:
//                    an operation in flight keeps its registration).
// The owner (one transport) calls get/put/purge from one thread; a mutex guards the table
// against invalidate() from others. With enabled = false (RRT_IB_REG_CACHE=off) every get
// registers and every put deregisters: the uncached baseline.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "runtime/core/list.h"
#include "runtime/core/status.h"

namespace rrt::memory {

// What the cache registers through: one memory domain (a verbs PD, a test double).
class RegDomain {
 public:
  virtual ~RegDomain() = default;
  virtual Status reg(void* addr, size_t len, void** handle) = 0;
  virtual void dereg(void* handle) = 0;
};

struct RegEntry {
  uintptr_t start = 0, end = 0;  // page-aligned [start, end)
  void* handle = nullptr;        // the domain's registration
  uint32_t refs = 0;
  bool dead = false;             // invalidated or evicted: no longer in the table
  core::ListHook link;           // in RegCache::lru_ (cached, unreferenced) or dead_ (dead)
};

struct RegCacheStats {
  uint64_t hits = 0, misses = 0, evictions = 0, invalidations = 0, registered = 0;
};

class RegCache {
 public:
  struct Limits {
    bool enabled = true;
    size_t maxEntries = 1024;
    size_t maxBytes = size_t{1} << 30;
  };

  RegCache(RegDomain* domain, Limits limits);
  ~RegCache();  // deregisters everything (the owner finished every operation)
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  Status get(void* addr, size_t len, RegEntry** out);
  void put(RegEntry* e);
  // Marks every entry overlapping [addr, addr+len) dead; safe from any thread and from hooks.
  void invalidate(uintptr_t addr, size_t len);
  // Deregisters what invalidate() left dead; called by get/put and from progress.
  void purge();

  const RegCacheStats& stats() const { return stats_; }
  size_t cachedEntries() const { return table_.size(); }

 private:
  void unlinkLocked(RegEntry* e);   // out of table_ and lru_, marked dead
  void evictLocked();               // until within limits
  void release(RegEntry* e);        // dereg + delete

  RegDomain* domain_;
  Limits limits_;
  std::mutex mu_;
  std::multimap<uintptr_t, RegEntry*> table_;  // by start; entries may overlap
  size_t bytes_ = 0;                            // sum of cached entries' lengths
  size_t maxLen_ = 0;                           // longest entry ever cached (invalidate's window)
  core::List<RegEntry, &RegEntry::link> lru_;  // unreferenced cached entries, oldest first
  core::List<RegEntry, &RegEntry::link> dead_; // unlinked and unreferenced: to deregister
  // dead_ is non-empty (set under mu_, read without it): purge() from every progress() call
  // takes no lock while there is nothing to purge. A stale false only delays the purge to the
  // next call.
  std::atomic<bool> haveDead_{false};
  RegCacheStats stats_;
};

}  // namespace rrt::memory
