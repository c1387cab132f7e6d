// Allgather(v): recursive doubling over p2 = 2^floor(log2 p) ranks; when p is not a power of
// two the extra ranks first hand their block to their odd neighbour and get everything back at
// the end (2 more steps).
// Cost: log2 p2 alpha + (p-1)/p N beta (+ 2 alpha + N beta folded). Wins for small and medium
// blocks at powers of two. With allgatherv's non-uniform layout every block is its own message.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/blocks.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AllgatherRecursiveDoubling final : public Task {
 public:
  AllgatherRecursiveDoubling(proto::Comm& c, CollArgs&& a)
      : Task(c, std::move(a)), b_(Blocks::of(args_)) {}

  Status advance() override {
    const int p = size(), r = rank();
    const Fold f = fold(r, p);
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start:
          if (!inPlace(args_.sbuf))
            copy(out() + b_.off(r), args_.sbuf, b_.len(r));
          if (p == 1) return Status::Ok;
          if (f.newRank < 0) {
            RRT_TRY(range(true, f.partner, r, r + 1));
            phase_ = Phase::ExtraResult;
            break;
          }
          if (f.partner >= 0) RRT_TRY(range(false, f.partner, f.partner, f.partner + 1));
          mask_ = 1;
          phase_ = Phase::Exchange;
          break;
        case Phase::Exchange: {
          if (mask_ >= f.p2) {
            // Unfold: the extra rank gets every block but its own.
            if (f.partner >= 0) {
              RRT_TRY(range(true, f.partner, 0, f.partner));
              RRT_TRY(range(true, f.partner, f.partner + 1, p));
            }
            phase_ = Phase::Done;
            break;
          }
          const int peerNew = f.newRank ^ mask_;
          const int mine = doublingHeldFirst(f.newRank, mask_), theirs = doublingHeldFirst(peerNew, mask_);
          const int peer = unfoldRank(peerNew, f.rem);
          RRT_TRY(range(false, peer, foldFirstRank(theirs, f.rem), foldEndRank(theirs + mask_ - 1, f.rem)));
          RRT_TRY(range(true, peer, foldFirstRank(mine, f.rem), foldEndRank(mine + mask_ - 1, f.rem)));
          mask_ <<= 1;
          break;
        }
        case Phase::ExtraResult:
          RRT_TRY(range(false, f.partner, 0, r));
          RRT_TRY(range(false, f.partner, r + 1, p));
          phase_ = Phase::Done;
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  char* out() { return bytePtr(args_.rbuf); }
  // Sends or receives the blocks of ranks [first, end): one message when the layout is uniform,
  // else one per non-empty block.
  Status range(bool isSend, int peer, int first, int end) {
    if (first >= end) return Status::Ok;
    auto op = [&](size_t o, size_t n) { return isSend ? send(peer, out() + o, n) : recv(peer, out() + o, n); };
    if (b_.uniform()) return op(b_.off(first), b_.len(first) * static_cast<size_t>(end - first));
    for (int i = first; i < end; ++i)
      if (b_.len(i) > 0) RRT_TRY(op(b_.off(i), b_.len(i)));
    return Status::Ok;
  }
  enum class Phase { Start, Exchange, ExtraResult, Done };
  Phase phase_ = Phase::Start;
  Blocks b_;
  int mask_ = 1;
};

}  // namespace

Task* makeAllgatherRecursiveDoubling(proto::Comm& c, CollArgs&& a) {
  return new AllgatherRecursiveDoubling(c, std::move(a));
}

}  // namespace rrt::coll
