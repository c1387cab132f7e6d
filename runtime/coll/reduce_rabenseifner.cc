// Reduce: Rabenseifner = reduce-scatter by recursive halving + binomial gather of the blocks to
// the root, over p2 = 2^floor(log2 p) ranks after folding the extra ranks in.
// Cost: 2 log2 p2 alpha + 2 (p2-1)/p2 n beta + (p2-1)/p2 n gamma (+ fold / unfold steps when p
// is not a power of two). Wins over the binomial tree for large messages at p >= 5, where the
// tree's log2 p n (beta + gamma) dominates; at p <= 4 the tree's smaller total work (no copy
// of the input at every rank, fewer rounds) wins, measured on 2 cores (tuning/shm-2vcpu.txt).
// Commutative ops only.
// The gather runs over u = newRank XOR rootNewRank, so the root's newRank is the tree's root
// and every node always holds one contiguous range of blocks.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class ReduceRabenseifner final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const size_t ts = args_.typeSize, bytes = args_.count * ts;
    const int root = args_.root;
    const Fold f = fold(rank(), size());
    const Fold fr = fold(root, size());
    const int rootNew = fr.newRank >= 0 ? fr.newRank : root / 2;  // an extra root: its partner
    auto off = [&](int v) { return blockOffset(args_.count, static_cast<size_t>(f.p2), static_cast<size_t>(v)); };
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          const bool isRoot = rank() == root;
          const void* in = isRoot && inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf;
          if (size() == 1 || bytes == 0) {
            if (isRoot) copy(args_.rbuf, in, bytes);
            return Status::Ok;
          }
          if (f.newRank < 0) {
            RRT_TRY(send(f.partner, in, bytes));
            phase_ = isRoot ? Phase::ExtraRootResult : Phase::Done;
            break;
          }
          acc_ = isRoot ? bytePtr(args_.rbuf) : scratch(bytes);
          if (!acc_ || !(tmp_ = scratch(bytes))) return Status::ErrNoMemory;
          // No copy of the input into acc_ (as in allreduce_rabenseifner.cc): the partner's
          // data, or the first halving step's kept half, lands in acc_ and the input is
          // combined into it where it lies.
          if (in != acc_) input_ = bytePtr(in);
          if (f.partner >= 0) RRT_TRY(recv(f.partner, input_ ? acc_ : tmp_, bytes));
          phase_ = Phase::Folded;
          break;
        }
        case Phase::Folded:
          if (f.partner >= 0) {
            reduce(input_ ? input_ : tmp_, acc_, args_.count);
            input_ = nullptr;
          }
          mask_ = f.p2 / 2;
          phase_ = Phase::Halving;
          RRT_TRY(postHalving(f, off));
          break;
        case Phase::Halving: {
          const int k = halvingKeepFirst(f.newRank, mask_);
          reduce(input_ ? input_ + off(k) * ts : tmp_, acc_ + off(k) * ts, off(k + mask_) - off(k));
          input_ = nullptr;
          mask_ >>= 1;
          if (mask_ > 0) {
            RRT_TRY(postHalving(f, off));
            break;
          }
          mask_ = 1;
          phase_ = Phase::Gather;
          break;
        }
        case Phase::Gather: {
          const int u = f.newRank ^ rootNew;
          if (mask_ >= f.p2) {  // u == 0: everything is here
            phase_ = Phase::Done;
            if (rank() != root) RRT_TRY(send(root, acc_, bytes));  // to an extra root
            break;
          }
          const int peerNew = f.newRank ^ mask_;
          const int peer = unfoldRank(peerNew, f.rem);
          if (u & mask_) {
            const int mine = doublingHeldFirst(f.newRank, mask_);
            RRT_TRY(send(peer, acc_ + off(mine) * ts, (off(mine + mask_) - off(mine)) * ts));
            phase_ = Phase::Done;
          } else {
            const int theirs = doublingHeldFirst(peerNew, mask_);
            RRT_TRY(recv(peer, acc_ + off(theirs) * ts, (off(theirs + mask_) - off(theirs)) * ts));
            mask_ <<= 1;
          }
          break;
        }
        case Phase::ExtraRootResult:
          RRT_TRY(recv(f.partner, args_.rbuf, bytes));
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
    RRT_TRY(recv(peer, input_ ? acc_ + off(k) * ts : tmp_, (off(k + mask_) - off(k)) * ts));
    return send(peer, (input_ ? input_ : acc_) + off(s) * ts, (off(s + mask_) - off(s)) * ts);
  }
  enum class Phase { Start, Folded, Halving, Gather, ExtraRootResult, Done };
  Phase phase_ = Phase::Start;
  char* acc_ = nullptr;
  char* tmp_ = nullptr;
  const char* input_ = nullptr;  // set while the data still lies in the input, not in acc_
  int mask_ = 0;
};

}  // namespace

Task* makeReduceRabenseifner(proto::Comm& c, CollArgs&& a) {
  return new ReduceRabenseifner(c, std::move(a));
}

}  // namespace rrt::coll
