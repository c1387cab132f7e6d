// Allgather(v): ring.
// Cost: (p-1) alpha + (p-1)/p N beta (N = all blocks). Neighbour traffic only, bandwidth-optimal:
// wins for large blocks, and is the default for allgatherv (any counts and displacements).
// Any p.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/blocks.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AllgatherRing final : public Task {
 public:
  AllgatherRing(proto::Comm& c, CollArgs&& a) : Task(c, std::move(a)), b_(Blocks::of(args_)) {}
  Status advance() override {
    const int p = size(), r = rank();
    char* out = bytePtr(args_.rbuf);
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      const bool copyOwn = step_ == 0 && !inPlace(args_.sbuf);
      if (step_ == p - 1) {  // p == 1
        if (copyOwn) copy(out + b_.off(r), args_.sbuf, b_.len(r));
        return Status::Ok;
      }
      const int sb = mod(r - step_, p), rb = mod(r - step_ - 1, p);
      RRT_TRY(recv(ringLeft(r, p), out + b_.off(rb), b_.len(rb)));
      // Step 0 sends the own block straight from the input, so that its copy into the output
      // (after posting) overlaps the transfer.
      RRT_TRY(send(ringRight(r, p), copyOwn ? bytePtr(args_.sbuf) : out + b_.off(sb), b_.len(sb)));
      if (copyOwn) copy(out + b_.off(r), args_.sbuf, b_.len(r));
      ++step_;
    }
  }

 private:
  Blocks b_;
  int step_ = 0;
};

}  // namespace

Task* makeAllgatherRing(proto::Comm& c, CollArgs&& a) { return new AllgatherRing(c, std::move(a)); }

// The task's steps in a row; its comments hold here too.
Status allgatherRingDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const Blocks b = Blocks::of(a);
  char* out = static_cast<char*>(a.rbuf);
  const bool copyOwn = !inPlace(a.sbuf);
  for (int step = 0; step < p - 1; ++step) {
    const int sb = mod(r - step, p), rb = mod(r - step - 1, p);
    const bool fromInput = step == 0 && copyOwn;
    RRT_TRY(d.recv(ringLeft(r, p), out + b.off(rb), b.len(rb)));
    RRT_TRY(d.send(ringRight(r, p), fromInput ? a.sbuf : out + b.off(sb), b.len(sb)));
    if (fromInput) Direct::copy(out + b.off(r), a.sbuf, b.len(r));
    RRT_TRY(d.wait());
  }
  if (p == 1 && copyOwn) Direct::copy(out + b.off(r), a.sbuf, b.len(r));
  return Status::Ok;
}

}  // namespace rrt::coll
