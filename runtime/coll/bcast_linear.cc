// Bcast: linear (flat tree): the root sends the message to every other rank at once; each
// other rank receives it from the root and forwards nothing.
// Cost: alpha + (p-1) n beta at the root, depth 1: the (p-1) eager sends are posted back to
// back (o each, overlapped on the wire), so for small n it is alpha + (p-1) o against
// binomial's ceil(log2 p) (alpha + o). Wins for small messages at small p, above all when the
// node is oversubscribed: no rank waits for a forwarding rank that may not be running (on 4
// ranks on 2 cores an 8-byte binomial bcast took ~250 us under load, as Open MPI's binomial
// did, while Open MPI's linear, its own choice there, took 0.4 us; tuning/shm-2vcpu.txt).
// Any p; loses to binomial once (p-1) o exceeds the tree's log p hops, and for large n, where
// the root's (p-1) n beta dominates.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class BcastLinear final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    if (posted_) {
      if (!idle()) return Status::InProgress;
      return error_;
    }
    posted_ = true;
    const int p = size(), root = args_.root;
    const size_t bytes = args_.count * args_.typeSize;
    if (p == 1 || bytes == 0) return Status::Ok;
    if (rank() != root) {
      RRT_TRY(recv(root, args_.rbuf, bytes));
    } else {
      // The next rank after the root first, as binomial's nearest child: any order is correct.
      for (int i = 1; i < p; ++i) RRT_TRY(send(fromRelative(i, root, p), args_.rbuf, bytes));
    }
    if (!idle()) return Status::InProgress;
    return error_;
  }

 private:
  bool posted_ = false;
};

}  // namespace

Task* makeBcastLinear(proto::Comm& c, CollArgs&& a) { return new BcastLinear(c, std::move(a)); }

}  // namespace rrt::coll
