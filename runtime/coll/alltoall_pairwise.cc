// Alltoall: pairwise exchange. Step s = 1 .. p-1: send the block for rank + s, receive the
// block of rank - s (every ordered pair exactly once, any p).
// Cost: (p-1) (alpha + b beta). Moves each block once, one partner per step (no contention):
// wins for large blocks. In place: the input is copied aside first.
#include <cstring>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AlltoallPairwise final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t b = args_.blockBytes;
    char* out = bytePtr(args_.rbuf);
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      if (step_ == 0) {
        if (inPlace(args_.sbuf)) {
          char* copyIn = scratch(static_cast<size_t>(p) * b);
          if (!copyIn) return Status::ErrNoMemory;
          copy(copyIn, out, static_cast<size_t>(p) * b);
          in_ = copyIn;
        } else {
          in_ = bytePtr(args_.sbuf);
        }
        copy(out + static_cast<size_t>(r) * b, in_ + static_cast<size_t>(r) * b, b);
        step_ = 1;
      }
      if (step_ >= p || b == 0) return Status::Ok;
      const int to = pairwiseTo(r, step_, p), from = pairwiseFrom(r, step_, p);
      RRT_TRY(recv(from, out + static_cast<size_t>(from) * b, b));
      RRT_TRY(send(to, in_ + static_cast<size_t>(to) * b, b));
      ++step_;
    }
  }

 private:
  const char* in_ = nullptr;
  int step_ = 0;
};

}  // namespace

Task* makeAlltoallPairwise(proto::Comm& c, CollArgs&& a) { return new AlltoallPairwise(c, std::move(a)); }

// The task's steps in a row.
Status alltoallPairwiseDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const size_t b = a.blockBytes;
  if (b == 0) return Status::Ok;
  char* const out = static_cast<char*>(a.rbuf);
  const char* in = static_cast<const char*>(a.sbuf);
  if (inPlace(a.sbuf)) {
    char* copyIn = d.scratch(static_cast<size_t>(p) * b);
    if (!copyIn) return Status::ErrNoMemory;
    std::memcpy(copyIn, out, static_cast<size_t>(p) * b);
    in = copyIn;
  } else {
    std::memcpy(out + static_cast<size_t>(r) * b, in + static_cast<size_t>(r) * b, b);
  }
  for (int step = 1; step < p; ++step) {
    const int to = pairwiseTo(r, step, p), from = pairwiseFrom(r, step, p);
    RRT_TRY(d.recv(from, out + static_cast<size_t>(from) * b, b));
    RRT_TRY(d.send(to, in + static_cast<size_t>(to) * b, b));
    RRT_TRY(d.wait());
  }
  return Status::Ok;
}

}  // namespace rrt::coll
