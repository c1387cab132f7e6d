// Allgather(v): recursive doubling over p2 = 2^floor(log2 p) ranks; when p is not a power of
// two the extra ranks first hand their block to their odd neighbour and get everything back at
// the end (2 more steps).
// Cost: log2 p2 alpha + (p-1)/p N beta (+ 2 alpha + N beta folded). Wins for small and medium
// blocks at powers of two. With allgatherv's non-uniform layout every block is its own message.
#include <cstring>

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
  // Sends or receives the blocks of ranks [first, end).
  Status range(bool isSend, int peer, int first, int end) {
    return b_.forRange(first, end, [&](size_t o, size_t n) {
      return isSend ? send(peer, out() + o, n) : recv(peer, out() + o, n);
    });
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

// The task's steps in a row.
Status allgatherRecursiveDoublingDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const Fold f = fold(r, p);
  const Blocks b = Blocks::of(a);
  char* const out = static_cast<char*>(a.rbuf);
  auto range = [&](bool isSend, int peer, int first, int end) {
    return b.forRange(first, end, [&](size_t o, size_t n) {
      return isSend ? d.send(peer, out + o, n) : d.recv(peer, out + o, n);
    });
  };
  // The own block goes to the output once a message needs it there, or at the end. A message of
  // just the own block leaves from the input instead, and the copy runs while it is in flight:
  // the peer does not wait for the copy, nor read lines this core just wrote (with a single-copy
  // transport, 2 ranks, 16K: 5.1 -> 2.3 us, the ring 2.0).
  bool ownPending = !inPlace(a.sbuf);
  auto copyOwn = [&] {
    if (ownPending) std::memcpy(out + b.off(r), a.sbuf, b.len(r));
    ownPending = false;
  };
  auto send = [&](int peer, int first, int end) {
    if (ownPending && first == r && end == r + 1) {
      RRT_TRY(d.send(peer, a.sbuf, b.len(r)));
      copyOwn();
      return Status::Ok;
    }
    copyOwn();
    return range(true, peer, first, end);
  };
  if (p == 1) {
    copyOwn();
    return Status::Ok;
  }
  if (f.newRank < 0) {  // extra rank: hand the block over, get every other one back
    RRT_TRY(send(f.partner, r, r + 1));
    RRT_TRY(d.wait());
    RRT_TRY(range(false, f.partner, 0, r));
    return range(false, f.partner, r + 1, p);
  }
  if (f.partner >= 0) {
    RRT_TRY(range(false, f.partner, f.partner, f.partner + 1));
    RRT_TRY(d.wait());
  }
  for (int mask = 1; mask < f.p2; mask <<= 1) {
    const int peerNew = f.newRank ^ mask;
    const int mine = doublingHeldFirst(f.newRank, mask), theirs = doublingHeldFirst(peerNew, mask);
    const int peer = unfoldRank(peerNew, f.rem);
    RRT_TRY(range(false, peer, foldFirstRank(theirs, f.rem), foldEndRank(theirs + mask - 1, f.rem)));
    RRT_TRY(send(peer, foldFirstRank(mine, f.rem), foldEndRank(mine + mask - 1, f.rem)));
    RRT_TRY(d.wait());
  }
  if (f.partner < 0) return Status::Ok;
  RRT_TRY(send(f.partner, 0, f.partner));  // unfold: every block but the extra rank's
  return send(f.partner, f.partner + 1, p);
}

}  // namespace rrt::coll
