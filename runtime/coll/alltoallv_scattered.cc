// Alltoallv: scattered, every receive and send posted at once (receives first, then sends in
// pairwise order rank+1, rank+2, ... to spread the load).
// Cost: alpha + (sum of the blocks) beta at best, but all p-1 transfers compete for the
// memory system at once. Wins for small blocks, where latency dominates. In place: the input is
// copied aside first.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AlltoallvScattered final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t ur = static_cast<size_t>(r);
    char* out = bytePtr(args_.rbuf);
    if (posted_) {
      if (!idle()) return Status::InProgress;
      return error_;
    }
    const char* in = bytePtr(args_.sbuf);
    if (inPlace(args_.sbuf)) {
      const size_t extent = vectorExtent(args_.recvBytes, args_.recvOffs);
      char* c = scratch(extent);
      if (!c) return Status::ErrNoMemory;
      copy(c, out, extent);
      in = c;
      args_.sendOffs = args_.recvOffs;
      args_.sendBytes = args_.recvBytes;
    }
    copy(out + args_.recvOffs[ur], in + args_.sendOffs[ur], args_.recvBytes[ur]);
    posted_ = true;
    for (int s = 1; s < p; ++s) {
      const size_t from = static_cast<size_t>(pairwiseFrom(r, s, p));
      RRT_TRY(recv(static_cast<int>(from), out + args_.recvOffs[from], args_.recvBytes[from]));
    }
    for (int s = 1; s < p; ++s) {
      const size_t to = static_cast<size_t>(pairwiseTo(r, s, p));
      RRT_TRY(send(static_cast<int>(to), in + args_.sendOffs[to], args_.sendBytes[to]));
    }
    if (!idle()) return Status::InProgress;
    return error_;
  }

 private:
  bool posted_ = false;
};

}  // namespace

Task* makeAlltoallvScattered(proto::Comm& c, CollArgs&& a) {
  return new AlltoallvScattered(c, std::move(a));
}

// The task's messages, then one wait.
Status alltoallvScatteredDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  char* out = static_cast<char*>(a.rbuf);
  AlltoallvSource src;
  RRT_TRY(alltoallvStart(d, a, &src));
  for (int s = 1; s < p; ++s) {
    const size_t from = static_cast<size_t>(pairwiseFrom(r, s, p));
    RRT_TRY(d.recv(static_cast<int>(from), out + a.recvOffs[from], a.recvBytes[from]));
  }
  for (int s = 1; s < p; ++s) {
    const size_t to = static_cast<size_t>(pairwiseTo(r, s, p));
    RRT_TRY(d.send(static_cast<int>(to), src.block(to), src.blockBytes(to)));
  }
  return Status::Ok;
}

}  // namespace rrt::coll
