// Gatherv: linear. The root posts every receive at once; the others send.
// Cost: (p-1) alpha + N beta at the root. The counts are known at the root only, so no tree
// can be planned elsewhere (as in MPICH); posting all receives at once overlaps the p-1 latencies.
#include "runtime/coll/algorithms.h"

namespace rrt::coll {
namespace {

class GathervLinear final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    if (!posted_) {
      posted_ = true;
      const int p = size(), r = rank();
      if (r != args_.root) {
        RRT_TRY(send(args_.root, args_.sbuf, args_.blockBytes));
      } else {
        char* out = bytePtr(args_.rbuf);
        const size_t ur = static_cast<size_t>(r);
        if (!inPlace(args_.sbuf)) copy(out + args_.recvOffs[ur], args_.sbuf, args_.recvBytes[ur]);
        for (int i = 0; i < p; ++i) {
          const size_t u = static_cast<size_t>(i);
          if (i != r) RRT_TRY(recv(i, out + args_.recvOffs[u], args_.recvBytes[u]));
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

Task* makeGathervLinear(proto::Comm& c, CollArgs&& a) { return new GathervLinear(c, std::move(a)); }

// The task's messages, then one wait.
Status gathervLinearDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  if (r != a.root) return d.send(a.root, a.sbuf, a.blockBytes);
  char* out = static_cast<char*>(a.rbuf);
  const size_t ur = static_cast<size_t>(r);
  if (!inPlace(a.sbuf)) Direct::copy(out + a.recvOffs[ur], a.sbuf, a.recvBytes[ur]);
  for (int i = 0; i < p; ++i) {
    const size_t u = static_cast<size_t>(i);
    if (i != r) RRT_TRY(d.recv(i, out + a.recvOffs[u], a.recvBytes[u]));
  }
  return Status::Ok;
}

}  // namespace rrt::coll
