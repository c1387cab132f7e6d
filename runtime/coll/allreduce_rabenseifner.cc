// Allreduce: Rabenseifner = reduce-scatter by recursive halving + allgather by recursive
// doubling, over p2 = 2^floor(log2 p) ranks after folding the extra ranks in.
// Cost: 2 log2 p2 alpha + 2 (p2-1)/p2 n beta + (p2-1)/p2 n gamma (+ 2 (alpha + n beta) + n gamma
// when p is not a power of two). Bandwidth-optimal with few messages: wins for medium and
// large messages. Combines blocks out of rank order: commutative ops only.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AllreduceRabenseifner final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const size_t ts = args_.typeSize, bytes = args_.count * ts;
    const Fold f = fold(rank(), size());
    // Element offset of newRank v's block.
    auto off = [&](int v) { return blockOffset(args_.count, static_cast<size_t>(f.p2), static_cast<size_t>(v)); };
    char* acc = bytePtr(args_.rbuf);
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
          if (f.newRank < 0) {
            RRT_TRY(send(f.partner, in, bytes));
            phase_ = Phase::ExtraResult;
            break;
          }
          // No copy of the input into the result: out of place, the partner's data lands in
          // the result and the input is combined into it; with no partner, the first halving
          // step sends from the input and receives the kept half straight into the result.
          if (!(tmp_ = scratch(bytes))) return Status::ErrNoMemory;
          if (!inPlace(args_.sbuf)) input_ = bytePtr(in);
          if (f.partner >= 0) RRT_TRY(recv(f.partner, input_ ? acc : tmp_, bytes));
          phase_ = Phase::Folded;
          break;
        }
        case Phase::Folded:
          if (f.partner >= 0) {
            reduce(input_ ? input_ : tmp_, acc, args_.count);
            input_ = nullptr;  // acc holds the data now
          }
          mask_ = f.p2 / 2;
          phase_ = Phase::Halving;
          if (mask_ == 0) phase_ = Phase::Unfold;
          else RRT_TRY(postHalving(f, off));
          break;
        case Phase::Halving: {
          const int k = halvingKeepFirst(f.newRank, mask_);
          reduce(input_ ? input_ + off(k) * ts : tmp_, acc + off(k) * ts, off(k + mask_) - off(k));
          input_ = nullptr;
          mask_ >>= 1;
          if (mask_ > 0) {
            RRT_TRY(postHalving(f, off));
            break;
          }
          mask_ = 1;
          phase_ = Phase::Doubling;
          RRT_TRY(postDoubling(f, off));
          break;
        }
        case Phase::Doubling:
          mask_ <<= 1;
          if (mask_ < f.p2) {
            RRT_TRY(postDoubling(f, off));
            break;
          }
          phase_ = Phase::Unfold;
          break;
        case Phase::Unfold:
          if (f.partner >= 0) RRT_TRY(send(f.partner, acc, bytes));
          phase_ = Phase::Done;
          break;
        case Phase::ExtraResult:
          RRT_TRY(recv(f.partner, acc, bytes));
          phase_ = Phase::Done;
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  template <typename Off>
  Status postHalving(const Fold& f, Off off) {
    const size_t ts = args_.typeSize;
    const int peer = unfoldRank(f.newRank ^ mask_, f.rem);
    const int k = halvingKeepFirst(f.newRank, mask_), s = halvingSendFirst(f.newRank, mask_);
    char* acc = bytePtr(args_.rbuf);
    RRT_TRY(recv(peer, input_ ? acc + off(k) * ts : tmp_, (off(k + mask_) - off(k)) * ts));
    return send(peer, (input_ ? input_ : acc) + off(s) * ts, (off(s + mask_) - off(s)) * ts);
  }
  template <typename Off>
  Status postDoubling(const Fold& f, Off off) {
    const size_t ts = args_.typeSize;
    const int peerNew = f.newRank ^ mask_;
    const int peer = unfoldRank(peerNew, f.rem);
    const int mine = doublingHeldFirst(f.newRank, mask_), theirs = doublingHeldFirst(peerNew, mask_);
    char* acc = bytePtr(args_.rbuf);
    RRT_TRY(recv(peer, acc + off(theirs) * ts, (off(theirs + mask_) - off(theirs)) * ts));
    return send(peer, acc + off(mine) * ts, (off(mine + mask_) - off(mine)) * ts);
  }
  enum class Phase { Start, Folded, Halving, Doubling, Unfold, ExtraResult, Done };
  Phase phase_ = Phase::Start;
  char* tmp_ = nullptr;
  const char* input_ = nullptr;  // set while the data still lies in the input, not in rbuf
  int mask_ = 0;
};

}  // namespace

Task* makeAllreduceRabenseifner(proto::Comm& c, CollArgs&& a) {
  return new AllreduceRabenseifner(c, std::move(a));
}

}  // namespace rrt::coll
