// Scratch memory of collectives, kept across calls. See scratch_cache.h.
#include "runtime/coll/scratch_cache.h"

#include <cstdlib>

namespace rrt::coll {
namespace {

constexpr size_t kAlign = 64;
size_t gLiveBytes = 0;

// The next power of two of at least kAlign (aligned_alloc wants a multiple of the alignment).
size_t roundUp(size_t bytes) {
  size_t c = kAlign;
  while (c < bytes && c <= ~size_t{0} / 2) c <<= 1;
  return c;
}

void freeBuffer(ScratchCache::Buffer b) {
  std::free(b.data);
  gLiveBytes -= b.capacity;
}

}  // namespace

ScratchCache::ScratchCache(size_t keepBytes) : keepBytes_(keepBytes) {
  idle_.reserve(kKeepBuffers + 1);
}

ScratchCache::~ScratchCache() {
  for (const Buffer& b : idle_) freeBuffer(b);
}

size_t ScratchCache::liveBytes() { return gLiveBytes; }

ScratchCache::Buffer ScratchCache::acquire(size_t bytes) {
  size_t best = idle_.size();
  for (size_t i = 0; i < idle_.size(); ++i)
    if (idle_[i].capacity >= bytes && (best == idle_.size() || idle_[i].capacity < idle_[best].capacity))
      best = i;
  Buffer b;
  if (best < idle_.size()) {
    b = idle_[best];
    idle_[best] = idle_.back();
    idle_.pop_back();
    idleBytes_ -= b.capacity;
  } else {
    const size_t capacity = roundUp(bytes);
    if (capacity < bytes) return {};  // no power of two holds it
    b.data = static_cast<char*>(std::aligned_alloc(kAlign, capacity));
    if (!b.data) return {};
    b.capacity = capacity;
    gLiveBytes += capacity;
    ++allocations_;
  }
  ++lent_;
  return b;
}

void ScratchCache::release(Buffer b) {
  if (!b.data) return;
  --lent_;
  if (b.capacity > keepBytes_) {
    freeBuffer(b);
    return;
  }
  idle_.push_back(b);
  idleBytes_ += b.capacity;
  while (idle_.size() > kKeepBuffers || idleBytes_ > keepBytes_) evictSmallest();
}

void ScratchCache::evictSmallest() {
  size_t s = 0;
  for (size_t i = 1; i < idle_.size(); ++i)
    if (idle_[i].capacity < idle_[s].capacity) s = i;
  freeBuffer(idle_[s]);
  idleBytes_ -= idle_[s].capacity;
  idle_[s] = idle_.back();
  idle_.pop_back();
}

}  // namespace rrt::coll
