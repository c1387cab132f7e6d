#include "runtime/memory/device_reg_cache.h"

#include <unistd.h>

namespace rrt::memory {

DeviceRegCache::DeviceRegCache(RegDomain* domain, size_t maxEntries)
    : domain_(domain), maxEntries_(maxEntries ? maxEntries : 1) {}

DeviceRegCache::~DeviceRegCache() {
  while (lru_.popFront()) {
  }
  for (auto& [base, e] : table_) release(e);
  table_.clear();
}

void DeviceRegCache::release(DeviceRegEntry* e) {
  domain_->dereg(e->handle);
  delete e;
}

void DeviceRegCache::drop(DeviceRegEntry* e) {
  table_.erase(e->base);
  e->dead = true;
  if (e->link.linked()) lru_.remove(e);
  if (e->refs == 0) release(e);  // else the last put releases it
}

Status DeviceRegCache::get(uintptr_t base, size_t size, uint64_t bufferId, RegEntry** out) {
  auto it = table_.find(base);
  if (it != table_.end()) {
    DeviceRegEntry* e = it->second;
    if (e->bufferId == bufferId && e->end >= base + size) {
      ++stats_.hits;
      if (e->refs++ == 0 && e->link.linked()) lru_.remove(e);
      *out = e;
      return Status::Ok;
    }
    ++stats_.invalidations;  // another allocation at this address now: the old one is gone
    drop(e);
  }
  ++stats_.misses;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  auto* e = new DeviceRegEntry;
  e->start = base & ~(page - 1);
  e->end = (base + size + page - 1) & ~(page - 1);
  e->base = base;
  e->bufferId = bufferId;
  Status st = domain_->reg(reinterpret_cast<void*>(e->start), e->end - e->start, &e->handle);
  if (st != Status::Ok) {
    delete e;
    return st;
  }
  ++stats_.registered;
  e->refs = 1;
  table_[base] = e;
  while (table_.size() > maxEntries_ && !lru_.empty()) {
    ++stats_.evictions;
    drop(static_cast<DeviceRegEntry*>(lru_.front()));
  }
  *out = e;
  return Status::Ok;
}

void DeviceRegCache::put(RegEntry* entry) {
  auto* e = static_cast<DeviceRegEntry*>(entry);
  if (--e->refs > 0) return;
  if (e->dead) {
    release(e);
    return;
  }
  lru_.pushBack(e);
  while (table_.size() > maxEntries_ && !lru_.empty()) {
    ++stats_.evictions;
    drop(static_cast<DeviceRegEntry*>(lru_.front()));
  }
}

}  // namespace rrt::memory
