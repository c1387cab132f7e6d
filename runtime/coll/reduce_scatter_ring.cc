// Reduce-scatter: segmented ring (see ring_pipeline.h), any counts per rank.
// Cost: (p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma, reduction overlapping transfer.
// Bandwidth-optimal with neighbour traffic only: wins for large messages. Commutative ops only.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"
#include "runtime/coll/ring_pipeline.h"

namespace rrt::coll {
namespace {

class ReduceScatterRing final : public RingTask {
 public:
  using RingTask::RingTask;

 protected:
  Status setup() override {
    const size_t r = static_cast<size_t>(rank());
    const void* in = inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf;
    layout_.off = args_.recvOffs;
    layout_.len = args_.recvBytes;
    layout_.in = bytePtr(in);
    if (size() == 1) {
      copy(args_.rbuf, in, args_.recvBytes[0]);
      return Status::Ok;
    }
    if (inPlace(args_.sbuf)) {
      // The result goes to the start of rbuf, which still holds input others need: keep it
      // apart until the end.
      if (!(layout_.own = scratch(args_.recvBytes[r]))) return Status::ErrNoMemory;
      ownScratch_ = true;
    } else {
      layout_.own = bytePtr(args_.rbuf);
    }
    return Status::Ok;
  }
  void finish() override {
    if (ownScratch_) copy(args_.rbuf, layout_.own, args_.recvBytes[static_cast<size_t>(rank())]);
  }

 private:
  bool ownScratch_ = false;
};

}  // namespace

Task* makeReduceScatterRing(proto::Comm& c, CollArgs&& a) {
  return new ReduceScatterRing(c, std::move(a));
}

}  // namespace rrt::coll
