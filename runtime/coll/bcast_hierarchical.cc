// Bcast: hierarchical (node-aware), for communicators spread over several nodes with several
// ranks on some. (1) The root and the leader (lowest rank) of every other node run a binomial
// bcast among themselves, across the network; (2) on every node, the rank that has the data
// (the root on its node, the leader elsewhere) runs a binomial bcast over the node's ranks,
// through shared memory.
// Cost, q ranks per node, m nodes, l = intra-node and r = inter-node link:
//   ceil(log m) (alpha_r + n beta_r) + ceil(log q) (alpha_l + n beta_l).
// Each node receives the data once from the network, instead of once per rank that a flat tree
// happens to place there.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_layout.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class BcastHierarchical final : public Task {
 public:
  BcastHierarchical(proto::Comm& c, CollArgs&& a)
      : Task(c, std::move(a)), layout_(nodeLayout(commNodeIds(c), c.rank)) {}

  Status advance() override {
    const size_t bytes = args_.count * args_.typeSize;
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          if (size() == 1 || bytes == 0) return Status::Ok;
          const int root = args_.root;
          const int rootNode = layout_.nodeOf[static_cast<size_t>(root)];
          const int myNode = layout_.nodeOf[static_cast<size_t>(rank())];
          // Representatives: the root for its node, the leader for the others.
          rep_ = myNode == rootNode ? root : layout_.leaders[static_cast<size_t>(myNode)];
          if (rank() == rep_) {
            m_ = static_cast<int>(layout_.leaders.size());
            rel_ = toRelative(myNode, rootNode, m_);
            rootNode_ = rootNode;
            if (rel_ != 0) RRT_TRY(recv(repOf(binomialParent(rel_)), args_.rbuf, bytes));
            phase_ = Phase::InterForward;
          } else {
            phase_ = Phase::Local;
          }
          break;
        }
        case Phase::InterForward: {
          int children[32];
          const int n = binomialChildren(rel_, m_, children);
          for (int c = 0; c < n; ++c) RRT_TRY(send(repOf(children[c]), args_.rbuf, bytes));
          phase_ = Phase::Local;
          break;
        }
        case Phase::Local: {
          // Binomial over the node's ranks, rooted at the representative's local index.
          const std::vector<int>& local = layout_.local;
          const int q = static_cast<int>(local.size());
          int repIndex = 0;
          while (local[static_cast<size_t>(repIndex)] != rep_) ++repIndex;
          localRel_ = toRelative(layout_.localIndex, repIndex, q);
          localRoot_ = repIndex;
          if (localRel_ != 0)
            RRT_TRY(recv(localRank(fromRelative(binomialParent(localRel_), repIndex, q)),
                         args_.rbuf, bytes));
          phase_ = Phase::LocalForward;
          break;
        }
        case Phase::LocalForward: {
          const int q = static_cast<int>(layout_.local.size());
          int children[32];
          const int n = binomialChildren(localRel_, q, children);
          for (int c = 0; c < n; ++c)
            RRT_TRY(send(localRank(fromRelative(children[c], localRoot_, q)), args_.rbuf, bytes));
          phase_ = Phase::Done;
          break;
        }
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase { Start, InterForward, Local, LocalForward, Done };

  // The representative of the node at relative position rel in the inter-node tree.
  int repOf(int rel) const {
    const int node = fromRelative(rel, rootNode_, m_);
    return node == rootNode_ ? args_.root : layout_.leaders[static_cast<size_t>(node)];
  }
  int localRank(int index) const { return layout_.local[static_cast<size_t>(index)]; }

  NodeLayout layout_;
  Phase phase_ = Phase::Start;
  int rep_ = 0, m_ = 1, rel_ = 0, rootNode_ = 0, localRel_ = 0, localRoot_ = 0;
};

}  // namespace

Task* makeBcastHierarchical(proto::Comm& c, CollArgs&& a) {
  return new BcastHierarchical(c, std::move(a));
}

}  // namespace rrt::coll
