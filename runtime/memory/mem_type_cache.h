// The memory-type cache: is a buffer host or device memory, answered without a driver call per
// message.
//
// It keeps (1) the device allocations it has seen (base, size, buffer id), filled from the
// driver's answer on a miss (cuPointerGetAttributes through the Query callback), and (2) a
// direct-mapped table of 2 MiB chunks known to hold host memory, so that a host buffer costs one
// table probe after its first use. A chunk that holds host memory cannot hold device memory:
// the driver's device address ranges are reserved at 2 MiB granularity or coarser; when the
// driver reports a device allocation overlapping a chunk cached as host, the chunk is dropped.
//
// Invalidation: invalidate(p, len) forgets everything cached about [p, p+len): call it when
// memory is freed, or when the driver rejects a cached device pointer (it was freed behind our
// back). A stale device entry is harmless until used: the copy fails with ErrArg, the caller
// invalidates and classifies again.
//
// Owned by runtime/gpu (one per process); single-threaded. classify() allocates only when it
// learns a new device allocation (never for host memory).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>

#include "runtime/core/status.h"
#include "runtime/memory/mem_type.h"

namespace rrt::memory {

struct Region {
  uintptr_t base = 0;
  size_t size = 0;
  MemType type = MemType::Host;
  uint64_t id = 0;  // the driver's buffer id
};

class MemTypeCache {
 public:
  // Asks the driver about p: Ok with out->type (and for device memory base/size/id), or an
  // error (then p is treated as host and nothing is cached).
  using Query = Status (*)(void* arg, const void* p, Region* out);

  static constexpr unsigned kChunkShift = 21;    // 2 MiB
  static constexpr size_t kHostSlots = 1024;     // direct-mapped host chunks (2 GiB covered)
  static constexpr size_t kMaxChunksCached = 16; // larger host buffers are re-queried

  MemTypeCache(Query query, void* arg) : query_(query), arg_(arg) { hostChunks_.fill(0); }

  // The memory type of [p, p+len) (len 0 counts as 1 byte). When region is non-null and the
  // buffer is device memory, *region is its allocation.
  MemType classify(const void* p, size_t len, Region* region = nullptr);
  void invalidate(const void* p, size_t len);
  void clear();

  // For tests and RRT_STATS.
  uint64_t queries() const { return queries_; }
  size_t deviceEntries() const { return device_.size(); }

 private:
  static uintptr_t chunkOf(uintptr_t a) { return a >> kChunkShift; }
  bool hostCached(uintptr_t first, uintptr_t last) const;
  void cacheHost(uintptr_t first, uintptr_t last);
  void dropHostChunks(uintptr_t begin, uintptr_t end);
  const Region* findDevice(uintptr_t a) const;

  Query query_;
  void* arg_;
  std::map<uintptr_t, Region> device_;          // by base
  std::array<uintptr_t, kHostSlots> hostChunks_; // chunk number + 1; 0 = empty
  uint64_t queries_ = 0;
};

}  // namespace rrt::memory
