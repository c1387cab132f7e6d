// Allgather: Bruck. Blocks are kept rotated (own block first) in a scratch buffer; at distance
// d = 1, 2, 4, ... a rank sends its first min(d, p-d) blocks to rank - d and appends as many
// from rank + d; a final rotation puts them in place.
// Cost: ceil(log2 p) alpha + (p-1)/p N beta + N copy. Fewest rounds for any p: wins for small
// blocks when p is not a power of two. Uniform blocks only (allgather).
#include <cstring>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AllgatherBruck final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t b = args_.blockBytes, up = static_cast<size_t>(p);
    char* out = bytePtr(args_.rbuf);
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      if (dist_ == 0) {  // start
        const void* own = inPlace(args_.sbuf) ? out + static_cast<size_t>(r) * b : args_.sbuf;
        if (p == 1 || b == 0) {
          copy(out, own, b);
          return Status::Ok;
        }
        if (!(tmp_ = scratch(up * b))) return Status::ErrNoMemory;
        copy(tmp_, own, b);
        dist_ = 1;
      } else {
        dist_ <<= 1;
      }
      if (dist_ >= p) break;
      const size_t n = static_cast<size_t>(bruckAllgatherCount(dist_, p)) * b;
      RRT_TRY(recv(bruckAllgatherFrom(r, dist_, p), tmp_ + static_cast<size_t>(dist_) * b, n));
      RRT_TRY(send(bruckAllgatherTo(r, dist_, p), tmp_, n));
    }
    // tmp_[i] is the block of rank r + i.
    const size_t head = up - static_cast<size_t>(r);
    copy(out + static_cast<size_t>(r) * b, tmp_, head * b);
    copy(out, tmp_ + head * b, static_cast<size_t>(r) * b);
    return Status::Ok;
  }

 private:
  char* tmp_ = nullptr;
  int dist_ = 0;  // 0 before the start, then the distance of the round in flight
};

}  // namespace

Task* makeAllgatherBruck(proto::Comm& c, CollArgs&& a) { return new AllgatherBruck(c, std::move(a)); }

// The task's rounds in a row; its comments hold here too.
Status allgatherBruckDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const size_t b = a.blockBytes, up = static_cast<size_t>(p), ur = static_cast<size_t>(r);
  char* out = static_cast<char*>(a.rbuf);
  const void* own = inPlace(a.sbuf) ? out + ur * b : a.sbuf;
  if (p == 1 || b == 0) {
    Direct::copy(out, own, b);
    return Status::Ok;
  }
  char* tmp = d.scratch(up * b);
  if (!tmp) return Status::ErrNoMemory;
  std::memcpy(tmp, own, b);
  for (int dist = 1; dist < p; dist <<= 1) {
    const size_t n = static_cast<size_t>(bruckAllgatherCount(dist, p)) * b;
    RRT_TRY(d.recv(bruckAllgatherFrom(r, dist, p), tmp + static_cast<size_t>(dist) * b, n));
    RRT_TRY(d.send(bruckAllgatherTo(r, dist, p), tmp, n));
    RRT_TRY(d.wait());
  }
  const size_t head = up - ur;
  std::memcpy(out + ur * b, tmp, head * b);
  Direct::copy(out, tmp + head * b, ur * b);
  return Status::Ok;
}

}  // namespace rrt::coll
