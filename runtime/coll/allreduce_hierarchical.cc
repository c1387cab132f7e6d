// Allreduce: hierarchical (node-aware), for communicators spread over several nodes with
// several ranks on some. (1) Each node reduces to its leader (its lowest rank) along a binomial
// tree over the node's ranks, i.e. through shared memory; (2) the leaders allreduce among
// themselves by recursive doubling (folding a non-power-of-two leader count, see patterns.h);
// (3) each leader broadcasts the result down the same tree.
// Cost, q ranks per node, m nodes, l = intra-node and r = inter-node link:
//   2 ceil(log q) (alpha_l + n beta_l) + ceil(log q) n gamma
//   + (ceil(log m) + 2 [m not a power of two]) (alpha_r + n beta_r + n gamma).
// Only log m messages per leader cross the network instead of log p per rank, and only one rank
// per node sends at a time: wins whenever inter-node links are slower than shared memory.
// Commutative ops only (operands are combined node by node, not in rank order).
#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_layout.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class AllreduceHierarchical final : public Task {
 public:
  AllreduceHierarchical(proto::Comm& c, CollArgs&& a)
      : Task(c, std::move(a)), layout_(nodeLayout(commNodeIds(c), c.rank)) {}

  Status advance() override {
    const size_t bytes = args_.count * args_.typeSize;
    const int q = static_cast<int>(layout_.local.size());
    const int li = layout_.localIndex;
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          if (!inPlace(args_.sbuf)) copy(args_.rbuf, args_.sbuf, bytes);
          if (size() == 1 || bytes == 0) return Status::Ok;
          nChildren_ = binomialChildren(li, q, children_);
          if (!(tmp_ = scratch(bytes * static_cast<size_t>(nChildren_ > 0 ? nChildren_ : 1))))
            return Status::ErrNoMemory;
          for (int c = 0; c < nChildren_; ++c)
            RRT_TRY(recv(localRank(children_[c]), tmp_ + static_cast<size_t>(c) * bytes, bytes));
          phase_ = Phase::LocalReduced;
          break;
        }
        case Phase::LocalReduced:
          for (int c = 0; c < nChildren_; ++c)
            reduce(tmp_ + static_cast<size_t>(c) * bytes, args_.rbuf, args_.count);
          if (li != 0) {  // hand the node's partial result up; the final one comes back down
            RRT_TRY(send(localRank(binomialParent(li)), args_.rbuf, bytes));
            phase_ = Phase::LocalSent;
          } else {
            fold_ = fold(layout_.leaderIndex, static_cast<int>(layout_.leaders.size()));
            phase_ = Phase::InterStart;
          }
          break;
        case Phase::LocalSent:
          RRT_TRY(recv(localRank(binomialParent(li)), args_.rbuf, bytes));
          phase_ = Phase::LocalBcast;
          break;
        case Phase::InterStart:
          if (fold_.newRank < 0) {  // extra leader: hand over, get the result back
            RRT_TRY(send(leader(fold_.partner), args_.rbuf, bytes));
            phase_ = Phase::InterExtraSent;
            break;
          }
          if (fold_.partner >= 0) RRT_TRY(recv(leader(fold_.partner), tmp_, bytes));
          phase_ = Phase::InterFolded;
          break;
        case Phase::InterExtraSent:
          RRT_TRY(recv(leader(fold_.partner), args_.rbuf, bytes));
          phase_ = Phase::LocalBcast;
          break;
        case Phase::InterFolded:
          if (fold_.partner >= 0) reduce(tmp_, args_.rbuf, args_.count);
          mask_ = 1;
          exchange(bytes);
          break;
        case Phase::InterExchange:
          reduce(tmp_, args_.rbuf, args_.count);
          mask_ <<= 1;
          exchange(bytes);
          break;
        case Phase::LocalBcast:
          for (int c = 0; c < nChildren_; ++c) RRT_TRY(send(localRank(children_[c]), args_.rbuf, bytes));
          phase_ = Phase::Done;
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase {
    Start, LocalReduced, LocalSent, InterStart, InterExtraSent, InterFolded, InterExchange,
    LocalBcast, Done
  };

  int localRank(int index) const { return layout_.local[static_cast<size_t>(index)]; }
  int leader(int index) const { return layout_.leaders[static_cast<size_t>(index)]; }

  // Posts the leaders' exchange at distance mask_, or (all done) gives the folded-in extra
  // leader its result and moves on to the node broadcast.
  void exchange(size_t bytes) {
    if (mask_ >= fold_.p2) {
      if (fold_.partner >= 0) error_ = send(leader(fold_.partner), args_.rbuf, bytes);
      phase_ = Phase::LocalBcast;
      return;
    }
    const int peer = leader(unfoldRank(fold_.newRank ^ mask_, fold_.rem));
    Status s = send(peer, args_.rbuf, bytes);
    if (s == Status::Ok) s = recv(peer, tmp_, bytes);
    if (s != Status::Ok) error_ = s;
    phase_ = Phase::InterExchange;
  }

  NodeLayout layout_;
  Phase phase_ = Phase::Start;
  Fold fold_;
  int mask_ = 1;
  int children_[32];
  int nChildren_ = 0;
  char* tmp_ = nullptr;
};

}  // namespace

Task* makeAllreduceHierarchical(proto::Comm& c, CollArgs&& a) {
  return new AllreduceHierarchical(c, std::move(a));
}

}  // namespace rrt::coll
