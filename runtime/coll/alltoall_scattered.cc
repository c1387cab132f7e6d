// Alltoall: scattered, every receive and send posted at once (receives first, then sends in
// pairwise order rank+1, rank+2, ... so that not every rank sends to the same peer first).
// Cost: alpha + (p-1) b beta at best, with all p-1 transfers competing for the memory system.
// Wins at few ranks, above all when they outnumber the cores: the pairwise exchange makes
// every step wait for one partner to be scheduled, p-1 times; here a rank waits once, for
// whichever peers are running. In place: the input is copied aside first.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AlltoallScattered final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t b = args_.blockBytes;
    char* out = bytePtr(args_.rbuf);
    if (posted_) {
      if (!idle()) return Status::InProgress;
      return error_;
    }
    const char* in = bytePtr(args_.sbuf);
    if (inPlace(args_.sbuf)) {
      char* c = scratch(static_cast<size_t>(p) * b);
      if (!c) return Status::ErrNoMemory;
      copy(c, out, static_cast<size_t>(p) * b);
      in = c;
    }
    posted_ = true;
    if (b > 0) {
      for (int s = 1; s < p; ++s) {
        const int from = pairwiseFrom(r, s, p);
        RRT_TRY(recv(from, out + static_cast<size_t>(from) * b, b));
      }
      for (int s = 1; s < p; ++s) {
        const int to = pairwiseTo(r, s, p);
        RRT_TRY(send(to, in + static_cast<size_t>(to) * b, b));
      }
    }
    // The own block while the others move.
    copy(out + static_cast<size_t>(r) * b, in + static_cast<size_t>(r) * b, b);
    if (!idle()) return Status::InProgress;
    return error_;
  }

 private:
  bool posted_ = false;
};

}  // namespace

Task* makeAlltoallScattered(proto::Comm& c, CollArgs&& a) {
  return new AlltoallScattered(c, std::move(a));
}

// The task's messages, then one wait.
Status alltoallScatteredDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const size_t b = a.blockBytes, total = static_cast<size_t>(p) * b;
  char* out = static_cast<char*>(a.rbuf);
  const char* in = static_cast<const char*>(a.sbuf);
  if (inPlace(a.sbuf)) {
    char* c = d.scratch(total);
    if (!c) return Status::ErrNoMemory;
    Direct::copy(c, out, total);
    in = c;
  }
  if (b > 0) {
    for (int s = 1; s < p; ++s) {
      const int from = pairwiseFrom(r, s, p);
      RRT_TRY(d.recv(from, out + static_cast<size_t>(from) * b, b));
    }
    for (int s = 1; s < p; ++s) {
      const int to = pairwiseTo(r, s, p);
      RRT_TRY(d.send(to, in + static_cast<size_t>(to) * b, b));
    }
  }
  Direct::copy(out + static_cast<size_t>(r) * b, in + static_cast<size_t>(r) * b, b);
  return Status::Ok;
}

}  // namespace rrt::coll
