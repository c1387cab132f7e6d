// Bcast: binomial scatter + ring allgather (van de Geijn).
// Cost: (log2 p + p - 1) alpha + 2 (p-1)/p n beta. Moves each byte about twice instead of
// log2 p times: wins for large messages at p >= 4 once n beta dominates (p - 1) alpha. Any p;
// blocks are the n bytes cut into p near-equal parts, in ranks relative to the root.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class BcastScatterAllgather final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      const int p = size(), root = args_.root, rel = toRelative(rank(), root, p);
      const size_t n = args_.count * args_.typeSize;
      char* buf = bytePtr(args_.rbuf);
      auto off = [&](int blk) { return blockOffset(n, static_cast<size_t>(p), static_cast<size_t>(blk)); };
      // Bytes of blocks [first, first + count).
      auto span = [&](int first, int count) { return off(first + count) - off(first); };
      switch (phase_) {
        case Phase::Scatter:
          if (p == 1 || n == 0) return Status::Ok;
          if (rel != 0) {
            const int sub = binomialSubtreeSize(rel, p);
            RRT_TRY(recv(fromRelative(binomialParent(rel), root, p), buf + off(rel), span(rel, sub)));
          }
          phase_ = Phase::ScatterForward;
          break;
        case Phase::ScatterForward: {
          int children[32];
          const int nc = binomialChildren(rel, p, children);
          for (int i = nc - 1; i >= 0; --i) {
            const int c = children[i];
            RRT_TRY(send(fromRelative(c, root, p), buf + off(c), span(c, binomialSubtreeSize(c, p))));
          }
          phase_ = Phase::Ring;
          step_ = 0;
          break;
        }
        case Phase::Ring: {
          if (step_ == p - 1) return Status::Ok;
          const int sb = mod(rel - step_, p), rb = mod(rel - step_ - 1, p);
          RRT_TRY(recv(fromRelative(mod(rel - 1, p), root, p), buf + off(rb), span(rb, 1)));
          RRT_TRY(send(fromRelative((rel + 1) % p, root, p), buf + off(sb), span(sb, 1)));
          ++step_;
          break;
        }
      }
    }
  }

 private:
  enum class Phase { Scatter, ScatterForward, Ring };
  Phase phase_ = Phase::Scatter;
  int step_ = 0;
};

}  // namespace

Task* makeBcastScatterAllgather(proto::Comm& c, CollArgs&& a) {
  return new BcastScatterAllgather(c, std::move(a));
}

}  // namespace rrt::coll
