// Alltoallv: pairwise exchange (as alltoall_pairwise.cc, per-pair counts and displacements).
// Cost: (p-1) alpha + (sum of the blocks) beta, one partner per step: the default, robust for
// any distribution of counts. In place: the input is copied aside first.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {


namespace {

class AlltoallvPairwise final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t ur = static_cast<size_t>(r);
    char* out = bytePtr(args_.rbuf);
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      if (step_ == 0) {
        if (inPlace(args_.sbuf)) {
          // In place: send from a copy of rbuf with the receive layout.
          const size_t extent = vectorExtent(args_.recvBytes, args_.recvOffs);
          char* c = scratch(extent);
          if (!c) return Status::ErrNoMemory;
          copy(c, out, extent);
          in_ = c;
          args_.sendOffs = args_.recvOffs;
          args_.sendBytes = args_.recvBytes;
        } else {
          in_ = bytePtr(args_.sbuf);
        }
        copy(out + args_.recvOffs[ur], in_ + args_.sendOffs[ur], args_.recvBytes[ur]);
        step_ = 1;
      }
      if (step_ >= p) return Status::Ok;
      const size_t to = static_cast<size_t>(pairwiseTo(r, step_, p));
      const size_t from = static_cast<size_t>(pairwiseFrom(r, step_, p));
      RRT_TRY(recv(static_cast<int>(from), out + args_.recvOffs[from], args_.recvBytes[from]));
      RRT_TRY(send(static_cast<int>(to), in_ + args_.sendOffs[to], args_.sendBytes[to]));
      ++step_;
    }
  }

 private:
  const char* in_ = nullptr;
  int step_ = 0;
};

}  // namespace

Task* makeAlltoallvPairwise(proto::Comm& c, CollArgs&& a) { return new AlltoallvPairwise(c, std::move(a)); }

Status alltoallvStart(Direct& d, const CollArgs& a, AlltoallvSource* src) {
  *src = {static_cast<const char*>(a.sbuf), &a.sendOffs, &a.sendBytes};
  if (inPlace(a.sbuf)) {
    const size_t extent = vectorExtent(a.recvBytes, a.recvOffs);
    char* c = d.scratch(extent);
    if (!c) return Status::ErrNoMemory;
    Direct::copy(c, a.rbuf, extent);
    *src = {c, &a.recvOffs, &a.recvBytes};
  }
  const size_t me = static_cast<size_t>(d.rank());
  Direct::copy(static_cast<char*>(a.rbuf) + a.recvOffs[me], src->block(me), a.recvBytes[me]);
  return Status::Ok;
}

// The task's steps in a row; its comments hold here too.
Status alltoallvPairwiseDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  char* out = static_cast<char*>(a.rbuf);
  AlltoallvSource src;
  RRT_TRY(alltoallvStart(d, a, &src));
  for (int step = 1; step < p; ++step) {
    const size_t to = static_cast<size_t>(pairwiseTo(r, step, p));
    const size_t from = static_cast<size_t>(pairwiseFrom(r, step, p));
    RRT_TRY(d.recv(static_cast<int>(from), out + a.recvOffs[from], a.recvBytes[from]));
    RRT_TRY(d.send(static_cast<int>(to), src.block(to), src.blockBytes(to)));
    RRT_TRY(d.wait());
  }
  return Status::Ok;
}

}  // namespace rrt::coll
