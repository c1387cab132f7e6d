// Allreduce: recursive doubling.
// Cost: log2 p2 (alpha + n beta + n gamma), plus 2 (alpha + n beta) + n gamma when p is not a
// power of two (the extra ranks fold into a neighbour first and get the result back at the
// end). Latency-optimal: wins for small messages. Keeps rank order (the fold and every
// exchange combine a lower rank range with the next higher one), so it serves non-commutative
// ops; for those the two buffers swap roles instead of copying.
#include <cstring>
#include <utility>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AllreduceRecursiveDoubling final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const size_t bytes = args_.count * args_.typeSize;
    const Fold f = fold(rank(), size());
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          const void* in = inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf;
          if (size() == 1 || bytes == 0) {
            copy(args_.rbuf, in, bytes);
            return Status::Ok;
          }
          if (f.newRank < 0) {  // extra rank: hand the input over, wait for the result
            RRT_TRY(send(f.partner, in, bytes));
            phase_ = Phase::ExtraResult;
            break;
          }
          copy(args_.rbuf, in, bytes);
          acc_ = bytePtr(args_.rbuf);
          if (!(tmp_ = scratch(bytes))) return Status::ErrNoMemory;
          if (f.partner >= 0) RRT_TRY(recv(f.partner, tmp_, bytes));
          phase_ = Phase::Folded;
          break;
        }
        case Phase::Folded:
          if (f.partner >= 0) reduce(tmp_, acc_, args_.count);  // partner is the lower rank
          mask_ = 1;
          phase_ = Phase::Exchange;
          post(f);
          break;
        case Phase::Exchange: {
          const int peerNew = f.newRank ^ mask_;
          if (peerNew < f.newRank || args_.reducer.commutative) {
            reduce(tmp_, acc_, args_.count);  // acc = lower op acc
          } else {
            reduce(acc_, tmp_, args_.count);  // tmp = acc op higher
            std::swap(acc_, tmp_);
          }
          mask_ <<= 1;
          post(f);
          break;
        }
        case Phase::Unfold:
          copy(args_.rbuf, acc_, bytes);
          if (f.partner >= 0) RRT_TRY(send(f.partner, args_.rbuf, bytes));
          phase_ = Phase::Done;
          break;
        case Phase::ExtraResult:
          RRT_TRY(recv(f.partner, args_.rbuf, bytes));
          phase_ = Phase::Done;
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  // Posts the exchange at distance mask_, or moves on to Unfold.
  void post(const Fold& f) {
    if (mask_ >= f.p2) {
      phase_ = Phase::Unfold;
      return;
    }
    const size_t bytes = args_.count * args_.typeSize;
    const int peer = unfoldRank(f.newRank ^ mask_, f.rem);
    if (recv(peer, tmp_, bytes) == Status::Ok) (void)send(peer, acc_, bytes);
  }
  enum class Phase { Start, Folded, Exchange, Unfold, ExtraResult, Done };
  Phase phase_ = Phase::Start;
  char* acc_ = nullptr;
  char* tmp_ = nullptr;
  int mask_ = 1;
};

}  // namespace

Task* makeAllreduceRecursiveDoubling(proto::Comm& c, CollArgs&& a) {
  return new AllreduceRecursiveDoubling(c, std::move(a));
}

// The task's steps in a row.
Status allreduceRecursiveDoublingDirect(Direct& d, const CollArgs& a) {
  const size_t bytes = a.count * a.typeSize;
  const Fold f = fold(d.rank(), d.size());
  const void* in = inPlace(a.sbuf) ? a.rbuf : a.sbuf;
  char* const out = static_cast<char*>(a.rbuf);
  if (in != out) std::memcpy(out, in, bytes);
  if (d.size() == 1 || bytes == 0) return Status::Ok;
  if (f.newRank < 0) {  // extra rank: hand the input over, wait for the result
    RRT_TRY(d.send(f.partner, out, bytes));
    RRT_TRY(d.wait());
    RRT_TRY(d.recv(f.partner, out, bytes));
    return Status::Ok;
  }
  char* acc = out;
  char* tmp = d.scratch(bytes);
  if (!tmp) return Status::ErrNoMemory;
  if (f.partner >= 0) {
    RRT_TRY(d.recv(f.partner, tmp, bytes));
    RRT_TRY(d.wait());
    a.reducer.apply(tmp, acc, a.count);  // partner is the lower rank
  }
  for (int mask = 1; mask < f.p2; mask <<= 1) {
    const int peerNew = f.newRank ^ mask, peer = unfoldRank(peerNew, f.rem);
    RRT_TRY(d.recv(peer, tmp, bytes));
    RRT_TRY(d.send(peer, acc, bytes));
    RRT_TRY(d.wait());
    if (peerNew < f.newRank || a.reducer.commutative) {
      a.reducer.apply(tmp, acc, a.count);  // acc = lower op acc
    } else {
      a.reducer.apply(acc, tmp, a.count);  // tmp = acc op higher
      std::swap(acc, tmp);
    }
  }
  if (acc != out) std::memcpy(out, acc, bytes);
  if (f.partner >= 0) RRT_TRY(d.send(f.partner, out, bytes));
  return Status::Ok;
}

}  // namespace rrt::coll
