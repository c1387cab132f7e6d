// Allreduce: segmented ring (reduce-scatter ring + allgather ring, pipelined by segment; see
// ring_pipeline.h).
// Cost: 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma, with the reduction of one segment
// overlapping the transfer of the next. Bandwidth-optimal with only neighbour traffic: wins for
// large messages (the "memcpy-bound ring bus bandwidth" target). Commutative ops only.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"
#include "runtime/coll/ring_pipeline.h"

namespace rrt::coll {
namespace {

class AllreduceRing final : public RingTask {
 public:
  using RingTask::RingTask;

 protected:
  Status setup() override {
    const int p = size();
    const size_t ts = args_.typeSize;
    const void* in = inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf;
    if (p == 1 || args_.count == 0) {
      copy(args_.rbuf, in, args_.count * ts);
      layout_.len.assign(static_cast<size_t>(p), 0);
      layout_.off.assign(static_cast<size_t>(p), 0);
      return Status::Ok;
    }
    for (int b = 0; b < p; ++b) {
      layout_.off.push_back(blockOffset(args_.count, static_cast<size_t>(p), static_cast<size_t>(b)) * ts);
      layout_.len.push_back(blockSize(args_.count, static_cast<size_t>(p), static_cast<size_t>(b)) * ts);
    }
    layout_.in = bytePtr(in);
    layout_.out = bytePtr(args_.rbuf);
    layout_.own = layout_.out + layout_.off[static_cast<size_t>(rank())];
    layout_.ownAliasesIn = inPlace(args_.sbuf);
    layout_.allgather = true;
    return Status::Ok;
  }
};

}  // namespace

Task* makeAllreduceRing(proto::Comm& c, CollArgs&& a) { return new AllreduceRing(c, std::move(a)); }

}  // namespace rrt::coll
