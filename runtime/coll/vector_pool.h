// Vectors whose storage outlives their owner: a collective's per-rank size arrays (CollArgs'
// four vectors, filled per call by the v-variants) and a task's overflow request list (more
// than ReqList::kInline messages in flight) go back here when their owner dies and are handed
// out again, so that a collective in steady state allocates nothing. At most Keep vectors of
// at most MaxEntries entries are kept. Single-threaded, like the collective engine.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/core/request.h"

namespace rrt::coll {

template <typename T, size_t Keep, size_t MaxEntries>
class VectorPool {
 public:
  // An empty vector with room for n entries (kept storage when some is large enough).
  std::vector<T> take(size_t n) {
    std::vector<T> v;
    for (size_t i = count_; i-- > 0;) {
      if (kept_[i].capacity() < n) continue;
      v.swap(kept_[i]);
      kept_[i].swap(kept_[--count_]);  // the last kept one fills the hole
      break;
    }
    v.reserve(n);
    return v;
  }
  // Keeps v's storage for a later take(); v is left empty.
  void give(std::vector<T>& v) {
    if (v.capacity() == 0 || v.capacity() > MaxEntries || count_ == Keep) return;
    v.clear();
    kept_[count_++].swap(v);
  }
  size_t kept() const { return count_; }

 private:
  std::vector<T> kept_[Keep];
  size_t count_ = 0;
};

// Four collectives' worth of size arrays, each up to 64 Ki ranks.
using SizesPool = VectorPool<size_t, 16, size_t{1} << 16>;
SizesPool& sizesPool();
// Overflow request lists, each up to 4096 requests.
using RequestListPool = VectorPool<core::Request*, 8, 4096>;
RequestListPool& requestListPool();

}  // namespace rrt::coll
