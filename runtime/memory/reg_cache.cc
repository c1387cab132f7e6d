#include "runtime/memory/reg_cache.h"

#include <unistd.h>

#include <vector>

#include "runtime/memory/release_hooks.h"

namespace rrt::memory {
namespace {

uintptr_t pageSize() {
  static const uintptr_t p = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// An overlapping entry that does not cover the request is skipped; after this many the lookup
// gives up and registers anew (bounds the cost of a miss among many small entries).
constexpr int kMaxLookupSteps = 8;

}  // namespace

RegCache::RegCache(RegDomain* domain, Limits limits) : domain_(domain), limits_(limits) {
  if (limits_.enabled) addReleaseListener(this);
}

RegCache::~RegCache() {
  if (limits_.enabled) removeReleaseListener(this);
  std::vector<RegEntry*> all;
  {
    std::lock_guard<std::mutex> g(mu_);
    for (auto& kv : table_) all.push_back(kv.second);
    table_.clear();
    while (RegEntry* e = dead_.popFront()) all.push_back(e);
    while (lru_.popFront()) {
    }
  }
  for (RegEntry* e : all) release(e);  // referenced ones too: the owner is done with them
}

void RegCache::release(RegEntry* e) {
  if (e->handle) domain_->dereg(e->handle);
  delete e;
}

void RegCache::unlinkLocked(RegEntry* e) {
  auto range = table_.equal_range(e->start);
  for (auto it = range.first; it != range.second; ++it)
    if (it->second == e) {
      table_.erase(it);
      break;
    }
  bytes_ -= e->end - e->start;
  if (e->link.linked()) lru_.remove(e);
  e->dead = true;
  if (e->refs == 0) {
    dead_.pushBack(e);
    haveDead_.store(true, std::memory_order_release);
  }
}

void RegCache::evictLocked() {
  while ((table_.size() > limits_.maxEntries || bytes_ > limits_.maxBytes) && !lru_.empty()) {
    unlinkLocked(lru_.front());
    ++stats_.evictions;
  }
}

void RegCache::purge() {
  if (!haveDead_.load(std::memory_order_acquire)) return;
  for (;;) {
    RegEntry* e;
    {
      std::lock_guard<std::mutex> g(mu_);
      e = dead_.popFront();
      if (dead_.empty()) haveDead_.store(false, std::memory_order_relaxed);
    }
    if (!e) return;
    release(e);
  }
}

Status RegCache::get(void* addr, size_t len, RegEntry** out) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t end = a + (len ? len : 1);
  if (limits_.enabled) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = table_.upper_bound(a);
    for (int step = 0; step < kMaxLookupSteps && it != table_.begin(); ++step) {
      --it;
      RegEntry* e = it->second;
      if (e->end >= end) {
        if (e->refs++ == 0 && e->link.linked()) lru_.remove(e);
        ++stats_.hits;
        *out = e;
        return Status::Ok;
      }
    }
  }
  purge();  // reads haveDead_, never dead_: invalidate() may change dead_ from another thread
  const uintptr_t ps = pageSize();
  RegEntry* e = new RegEntry;
  e->start = a & ~(ps - 1);
  e->end = (end + ps - 1) & ~(ps - 1);
  Status st = domain_->reg(reinterpret_cast<void*>(e->start), e->end - e->start, &e->handle);
  if (st != Status::Ok) {
    delete e;
    return st;
  }
  e->refs = 1;
  ++stats_.registered;
  if (!limits_.enabled) {
    e->dead = true;
    *out = e;
    return Status::Ok;
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    ++stats_.misses;
    table_.emplace(e->start, e);
    bytes_ += e->end - e->start;
    if (e->end - e->start > maxLen_) maxLen_ = e->end - e->start;
    evictLocked();
  }
  purge();
  *out = e;
  return Status::Ok;
}

void RegCache::put(RegEntry* e) {
  if (!limits_.enabled) {
    release(e);
    return;
  }
  bool releaseNow = false;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (--e->refs == 0) {
      if (e->dead) {
        releaseNow = true;  // invalidated while in use: not on dead_, ours to free
      } else {
        lru_.pushBack(e);
        evictLocked();
      }
    }
  }
  if (releaseNow) release(e);
  purge();
}

void RegCache::invalidate(uintptr_t addr, size_t len) {
  std::lock_guard<std::mutex> g(mu_);
  if (table_.empty()) return;
  const uintptr_t end = addr + len;
  auto it = table_.lower_bound(addr > maxLen_ ? addr - maxLen_ : 0);
  while (it != table_.end() && it->first < end) {
    RegEntry* e = it->second;
    ++it;  // unlinkLocked erases e's node
    if (e->end > addr) {
      unlinkLocked(e);
      ++stats_.invalidations;
    }
  }
}

}  // namespace rrt::memory
