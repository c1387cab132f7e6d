// Scatterv: linear. The root posts every send at once; the others receive.
// Cost: (p-1) alpha + N beta at the root. The counts are known at the root only (as in MPICH).
#include "runtime/coll/algorithms.h"

namespace rrt::coll {
namespace {

class ScattervLinear final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    if (!posted_) {
      posted_ = true;
      const int p = size(), r = rank();
      if (r != args_.root) {
        RRT_TRY(recv(args_.root, args_.rbuf, args_.blockBytes));
      } else {
        const char* in = bytePtr(args_.sbuf);
        const size_t ur = static_cast<size_t>(r);
        if (!inPlace(args_.rbuf)) copy(args_.rbuf, in + args_.sendOffs[ur], args_.sendBytes[ur]);
        for (int s = 1; s < p; ++s) {
          const size_t u = static_cast<size_t>((r + s) % p);
          RRT_TRY(send(static_cast<int>(u), in + args_.sendOffs[u], args_.sendBytes[u]));
        }
      }
    }
    if (!idle()) return Status::InProgress;
    return error_;
  }

 private:
  bool posted_ = false;
};

}  // namespace

Task* makeScattervLinear(proto::Comm& c, CollArgs&& a) { return new ScattervLinear(c, std::move(a)); }

// The task's messages, then one wait.
Status scattervLinearDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  if (r != a.root) return d.recv(a.root, a.rbuf, a.blockBytes);
  const char* in = static_cast<const char*>(a.sbuf);
  const size_t ur = static_cast<size_t>(r);
  if (!inPlace(a.rbuf)) Direct::copy(a.rbuf, in + a.sendOffs[ur], a.sendBytes[ur]);
  for (int s = 1; s < p; ++s) {
    const size_t u = static_cast<size_t>((r + s) % p);
    RRT_TRY(d.send(static_cast<int>(u), in + a.sendOffs[u], a.sendBytes[u]));
  }
  return Status::Ok;
}

}  // namespace rrt::coll
