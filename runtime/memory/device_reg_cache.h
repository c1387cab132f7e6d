// Registrations of device (GPU) memory for GPUDirect RDMA, reused across messages, bounded and
// LRU-evicted, as RegCache does for host memory.
//
// Why a cache of its own: device memory leaves through cuMemFree, which no munmap hook sees, so
// RegCache's invalidation cannot work for it. Instead every lookup carries the driver's fresh
// answer for the address (gpu::PointerInfo: allocation base, size, buffer id; the protocol asks
// for it anyway to choose the path): the driver gives every allocation a unique buffer id, so an
// allocation freed and made again at the same address has a new id, and its stale registration
// (which still holds the old pages) is dropped, never used.
//
// What is registered: the whole allocation, page-aligned (as UCX does by default): one
// registration serves every message from any part of it.
//
// Contract (one thread, the owning transport's):
//   get(base, size, id)  an entry registering [base, base+size) with one more reference: a hit
//                        when the allocation at base with this id is cached; else a new
//                        registration through the domain (the old entry at base, if any, is
//                        dropped: deregistered now, or when its last reference goes).
//   put(entry)           drops the reference; unreferenced entries stay cached, LRU, until
//                        evicted by maxEntries or replaced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "runtime/memory/reg_cache.h"

namespace rrt::memory {

struct DeviceRegEntry : RegEntry {
  uintptr_t base = 0;  // the allocation's base (the table's key)
  uint64_t bufferId = 0;
};

class DeviceRegCache {
 public:
  DeviceRegCache(RegDomain* domain, size_t maxEntries);
  ~DeviceRegCache();  // deregisters everything (the owner finished every operation)
  DeviceRegCache(const DeviceRegCache&) = delete;
  DeviceRegCache& operator=(const DeviceRegCache&) = delete;

  Status get(uintptr_t base, size_t size, uint64_t bufferId, RegEntry** out);
  void put(RegEntry* e);

  const RegCacheStats& stats() const { return stats_; }
  size_t cachedEntries() const { return table_.size(); }

 private:
  void drop(DeviceRegEntry* e);  // out of the table; released now or at its last put
  void release(DeviceRegEntry* e);

  RegDomain* domain_;
  size_t maxEntries_;
  std::map<uintptr_t, DeviceRegEntry*> table_;  // by allocation base
  core::List<RegEntry, &RegEntry::link> lru_;   // unreferenced cached entries, oldest first
  RegCacheStats stats_;
};

}  // namespace rrt::memory
