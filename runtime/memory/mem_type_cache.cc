#include "runtime/memory/mem_type_cache.h"

namespace rrt::memory {

bool MemTypeCache::hostCached(uintptr_t first, uintptr_t last) const {
  for (uintptr_t c = first; c <= last; ++c)
    if (hostChunks_[c % kHostSlots] != c + 1) return false;
  return true;
}

void MemTypeCache::cacheHost(uintptr_t first, uintptr_t last) {
  if (last - first + 1 > kMaxChunksCached) return;
  for (uintptr_t c = first; c <= last; ++c) hostChunks_[c % kHostSlots] = c + 1;
}

void MemTypeCache::dropHostChunks(uintptr_t begin, uintptr_t end) {
  if (end <= begin) return;
  const uintptr_t first = chunkOf(begin), last = chunkOf(end - 1);
  if (last - first + 1 >= kHostSlots) {
    hostChunks_.fill(0);
    return;
  }
  for (uintptr_t c = first; c <= last; ++c)
    if (hostChunks_[c % kHostSlots] == c + 1) hostChunks_[c % kHostSlots] = 0;
}

const Region* MemTypeCache::findDevice(uintptr_t a) const {
  auto it = device_.upper_bound(a);
  if (it == device_.begin()) return nullptr;
  --it;
  const Region& r = it->second;
  return a - r.base < r.size ? &r : nullptr;
}

MemType MemTypeCache::classify(const void* p, size_t len, Region* region) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t last = a + (len ? len - 1 : 0);
  if (hostCached(chunkOf(a), chunkOf(last))) return MemType::Host;
  if (const Region* r = findDevice(a)) {
    if (region) *region = *r;
    return MemType::Cuda;
  }
  ++queries_;
  Region found;
  if (query_(arg_, p, &found) != Status::Ok || found.type == MemType::Host) {
    cacheHost(chunkOf(a), chunkOf(last));
    return MemType::Host;
  }
  if (found.size == 0 || a < found.base || a - found.base >= found.size) {
    found.base = a;  // the driver gave no range: remember the buffer itself
    found.size = len ? len : 1;
  }
  // A new allocation replaces whatever overlapped it (freed and reallocated memory).
  invalidate(reinterpret_cast<const void*>(found.base), found.size);
  device_[found.base] = found;
  if (region) *region = found;
  return found.type;
}

void MemTypeCache::invalidate(const void* p, size_t len) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = begin + (len ? len : 1);
  dropHostChunks(begin, end);
  auto it = device_.upper_bound(begin);
  if (it != device_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.base + prev->second.size > begin) it = prev;
  }
  while (it != device_.end() && it->second.base < end) it = device_.erase(it);
}

void MemTypeCache::clear() {
  device_.clear();
  hostChunks_.fill(0);
}

}  // namespace rrt::memory
