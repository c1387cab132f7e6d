// Reduce-scatter: recursive halving over p2 = 2^floor(log2 p) ranks after folding the extra
// ranks in; any counts per rank (reduce_scatter and reduce_scatter_block).
// Cost: log2 p2 alpha + (p2-1)/p2 n beta + (p2-1)/p2 n gamma (+ 2 alpha + n beta + n gamma when
// p is not a power of two). Few messages, every byte moved once per halving: wins for small and
// medium messages. Commutative ops only.
// NewRank v stands for ranks [foldFirstRank(v), foldEndRank(v)); since the input is laid out in
// rank order, a range of newRanks is one contiguous byte range.
#include <utility>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class ReduceScatterRecursiveHalving final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t ur = static_cast<size_t>(r), ts = args_.typeSize;
    const Fold f = fold(r, p);
    const size_t total = args_.recvOffs.back() + args_.recvBytes.back();
    // Byte offset of newRank v's first block (v == p2: the end).
    auto off = [&](int v) {
      return v >= f.p2 ? total : args_.recvOffs[static_cast<size_t>(foldFirstRank(v, f.rem))];
    };
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          const void* in = inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf;
          if (p == 1) {
            copy(args_.rbuf, in, args_.recvBytes[0]);
            return Status::Ok;
          }
          if (f.newRank < 0) {
            RRT_TRY(send(f.partner, in, total));
            phase_ = Phase::ExtraResult;
            break;
          }
          acc_ = scratch(total);
          tmp_ = scratch(total);
          if (!acc_ || !tmp_) return Status::ErrNoMemory;
          copy(acc_, in, total);
          if (f.partner >= 0) RRT_TRY(recv(f.partner, tmp_, total));
          phase_ = Phase::Folded;
          break;
        }
        case Phase::Folded:
          if (f.partner >= 0) reduce(tmp_, acc_, total / ts);
          mask_ = f.p2 / 2;
          phase_ = Phase::Halving;
          if (mask_ > 0) RRT_TRY(postHalving(f, off));
          break;
        case Phase::Halving:
          if (mask_ > 0) {
            const int k = halvingKeepFirst(f.newRank, mask_);
            reduce(tmp_, acc_ + off(k), (off(k + mask_) - off(k)) / ts);
            mask_ >>= 1;
            if (mask_ > 0) {
              RRT_TRY(postHalving(f, off));
              break;
            }
          }
          // acc_ holds the results of ranks [foldFirstRank(v), foldEndRank(v)).
          if (f.partner >= 0) {
            const size_t e = static_cast<size_t>(f.partner);
            RRT_TRY(send(f.partner, acc_ + args_.recvOffs[e], args_.recvBytes[e]));
          }
          copy(args_.rbuf, acc_ + args_.recvOffs[ur], args_.recvBytes[ur]);
          phase_ = Phase::Done;
          break;
        case Phase::ExtraResult:
          RRT_TRY(recv(f.partner, args_.rbuf, args_.recvBytes[ur]));
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
    const int peer = unfoldRank(f.newRank ^ mask_, f.rem);
    const int k = halvingKeepFirst(f.newRank, mask_), s = halvingSendFirst(f.newRank, mask_);
    RRT_TRY(recv(peer, tmp_, off(k + mask_) - off(k)));
    return send(peer, acc_ + off(s), off(s + mask_) - off(s));
  }
  enum class Phase { Start, Folded, Halving, ExtraResult, Done };
  Phase phase_ = Phase::Start;
  char* acc_ = nullptr;
  char* tmp_ = nullptr;
  int mask_ = 0;
};

}  // namespace

Task* makeReduceScatterRecursiveHalving(proto::Comm& c, CollArgs&& a) {
  return new ReduceScatterRecursiveHalving(c, std::move(a));
}

// The task's steps in a row; its comments hold here too.
Status reduceScatterRecursiveHalvingDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const size_t ur = static_cast<size_t>(r), ts = a.typeSize;
  const Fold f = fold(r, p);
  const size_t total = a.recvOffs.back() + a.recvBytes.back();
  auto off = [&](int v) {
    return v >= f.p2 ? total : a.recvOffs[static_cast<size_t>(foldFirstRank(v, f.rem))];
  };
  const void* in = inPlace(a.sbuf) ? a.rbuf : a.sbuf;
  if (p == 1) {
    Direct::copy(a.rbuf, in, a.recvBytes[0]);
    return Status::Ok;
  }
  if (f.newRank < 0) {  // extra rank: hand the input over, wait for its block
    RRT_TRY(d.send(f.partner, in, total));
    RRT_TRY(d.wait());
    return d.recv(f.partner, a.rbuf, a.recvBytes[ur]);
  }
  char* acc = d.scratch(total);
  char* tmp = d.scratch(total);
  if (!acc || !tmp) return Status::ErrNoMemory;
  Direct::copy(acc, in, total);
  if (f.partner >= 0) {
    RRT_TRY(d.recv(f.partner, tmp, total));
    RRT_TRY(d.wait());
    a.reducer.apply(tmp, acc, total / ts);
  }
  for (int mask = f.p2 / 2; mask > 0; mask >>= 1) {
    const int peer = unfoldRank(f.newRank ^ mask, f.rem);
    const int k = halvingKeepFirst(f.newRank, mask), s = halvingSendFirst(f.newRank, mask);
    RRT_TRY(d.recv(peer, tmp, off(k + mask) - off(k)));
    RRT_TRY(d.send(peer, acc + off(s), off(s + mask) - off(s)));
    RRT_TRY(d.wait());
    a.reducer.apply(tmp, acc + off(k), (off(k + mask) - off(k)) / ts);
  }
  if (f.partner >= 0) {
    const size_t e = static_cast<size_t>(f.partner);
    RRT_TRY(d.send(f.partner, acc + a.recvOffs[e], a.recvBytes[e]));
  }
  Direct::copy(a.rbuf, acc + a.recvOffs[ur], a.recvBytes[ur]);
  return Status::Ok;
}

}  // namespace rrt::coll
