// Bcast: binomial tree.
// Cost: ceil(log2 p) (alpha + n beta). Latency-optimal; wins for small messages and for p <= 3
// at any size (then it is one or two direct sends). Any p.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class BcastBinomial final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      const int p = size(), root = args_.root, rel = toRelative(rank(), root, p);
      const size_t bytes = args_.count * args_.typeSize;
      switch (phase_) {
        case Phase::Receive:
          phase_ = Phase::Forward;
          if (p == 1 || bytes == 0) return Status::Ok;
          if (rel != 0) RRT_TRY(recv(fromRelative(binomialParent(rel), root, p), args_.rbuf, bytes));
          break;
        case Phase::Forward: {
          int children[32];
          const int n = binomialChildren(rel, p, children);
          // Largest subtree first: it has the longest way to go.
          for (int i = n - 1; i >= 0; --i)
            RRT_TRY(send(fromRelative(children[i], root, p), args_.rbuf, bytes));
          phase_ = Phase::Done;
          break;
        }
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase { Receive, Forward, Done };
  Phase phase_ = Phase::Receive;
};

}  // namespace

Task* makeBcastBinomial(proto::Comm& c, CollArgs&& a) { return new BcastBinomial(c, std::move(a)); }

Status bcastBinomialDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), root = a.root, rel = toRelative(d.rank(), root, p);
  const size_t bytes = a.count * a.typeSize;
  if (p == 1 || bytes == 0) return Status::Ok;
  if (rel != 0) {
    RRT_TRY(d.recv(fromRelative(binomialParent(rel), root, p), a.rbuf, bytes));
    RRT_TRY(d.wait());
  }
  int children[32];
  for (int i = binomialChildren(rel, p, children) - 1; i >= 0; --i)
    RRT_TRY(d.send(fromRelative(children[i], root, p), a.rbuf, bytes));
  return Status::Ok;
}

}  // namespace rrt::coll
