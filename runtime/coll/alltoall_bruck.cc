// Alltoall: Bruck. Rotate the blocks so block i is for rank r + i; at distance d = 1, 2, 4, ...
// pack the blocks whose index has bit d set, send them to rank + d and put the ones from
// rank - d in their place; finally block i came from rank r - i.
// Cost: ceil(log2 p) alpha + ceil(log2 p) (p/2) b beta + packing copies. Fewest messages: wins
// for small blocks at p >= 3; loses to pairwise once (p/2) log2 p b beta outweighs p alpha.
#include <cstring>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AlltoallBruck final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t b = args_.blockBytes, up = static_cast<size_t>(p);
    char* out = bytePtr(args_.rbuf);
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      if (dist_ == 0) {
        const char* in = inPlace(args_.sbuf) ? out : bytePtr(args_.sbuf);
        if (p == 1 || b == 0) {
          copy(out, in, b);
          return Status::Ok;
        }
        const size_t maxPack = (up + 1) / 2 * b;
        tmp_ = scratch(up * b);
        pack_ = scratch(maxPack);
        unpack_ = scratch(maxPack);
        if (!tmp_ || !pack_ || !unpack_) return Status::ErrNoMemory;
        const size_t head = up - static_cast<size_t>(r);  // tmp[i] = in[(r + i) % p]
        copy(tmp_, in + static_cast<size_t>(r) * b, head * b);
        copy(tmp_ + head * b, in, static_cast<size_t>(r) * b);
        dist_ = 1;
      } else {
        // Unpack what arrived at distance dist_.
        size_t k = 0;
        for (int i = 0; i < p; ++i)
          if (i & dist_) copy(tmp_ + static_cast<size_t>(i) * b, unpack_ + (k++) * b, b);
        dist_ <<= 1;
      }
      if (dist_ >= p) break;
      size_t k = 0;
      for (int i = 0; i < p; ++i)
        if (i & dist_) copy(pack_ + (k++) * b, tmp_ + static_cast<size_t>(i) * b, b);
      RRT_TRY(recv(bruckAlltoallFrom(r, dist_, p), unpack_, k * b));
      RRT_TRY(send(bruckAlltoallTo(r, dist_, p), pack_, k * b));
    }
    for (int i = 0; i < p; ++i)
      copy(out + static_cast<size_t>(mod(r - i, p)) * b, tmp_ + static_cast<size_t>(i) * b, b);
    return Status::Ok;
  }

 private:
  char* tmp_ = nullptr;
  char* pack_ = nullptr;
  char* unpack_ = nullptr;
  int dist_ = 0;
};

}  // namespace

Task* makeAlltoallBruck(proto::Comm& c, CollArgs&& a) { return new AlltoallBruck(c, std::move(a)); }

// The task's steps in a row; its three buffers are cut from one scratch buffer.
Status alltoallBruckDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const size_t b = a.blockBytes, up = static_cast<size_t>(p);
  char* const out = static_cast<char*>(a.rbuf);
  const char* in = inPlace(a.sbuf) ? out : static_cast<const char*>(a.sbuf);
  if (p == 1 || b == 0) {
    if (in != out) std::memcpy(out, in, b);
    return Status::Ok;
  }
  const size_t maxPack = (up + 1) / 2 * b;
  char* const tmp = d.scratch(up * b + 2 * maxPack);
  if (!tmp) return Status::ErrNoMemory;
  char* const pack = tmp + up * b;
  char* const unpack = pack + maxPack;
  const size_t head = up - static_cast<size_t>(r);  // tmp[i] = in[(r + i) % p]
  std::memcpy(tmp, in + static_cast<size_t>(r) * b, head * b);
  std::memcpy(tmp + head * b, in, static_cast<size_t>(r) * b);
  for (int dist = 1; dist < p; dist <<= 1) {
    size_t k = 0;
    for (int i = 0; i < p; ++i)
      if (i & dist) std::memcpy(pack + (k++) * b, tmp + static_cast<size_t>(i) * b, b);
    RRT_TRY(d.recv(bruckAlltoallFrom(r, dist, p), unpack, k * b));
    RRT_TRY(d.send(bruckAlltoallTo(r, dist, p), pack, k * b));
    RRT_TRY(d.wait());
    k = 0;
    for (int i = 0; i < p; ++i)
      if (i & dist) std::memcpy(tmp + static_cast<size_t>(i) * b, unpack + (k++) * b, b);
  }
  for (int i = 0; i < p; ++i)
    std::memcpy(out + static_cast<size_t>(mod(r - i, p)) * b, tmp + static_cast<size_t>(i) * b, b);
  return Status::Ok;
}

}  // namespace rrt::coll
