// Bcast: linear (flat tree): the root sends the message to every other rank at once; each
// other rank receives it from the root and forwards nothing.
// Cost: alpha + (p-1) n beta at the root, depth 1: the (p-1) eager sends are posted back to
// back (o each, overlapped on the wire), so for small n it is alpha + (p-1) o against
// binomial's ceil(log2 p) (alpha + o). Wins for small messages at small p, above all when the
// node is oversubscribed: no rank waits for a forwarding rank that may not be running (on 4
// ranks on 2 cores an 8-byte binomial bcast took ~250 us under load, as Open MPI's binomial
// did, while Open MPI's linear, its own choice there, took 0.4 us; tuning/shm-2vcpu.txt).
// Any p; loses to binomial once (p-1) o exceeds the tree's log p hops, and for large n, where
// the root's (p-1) n beta dominates.
// Below kPiecesBelow, messages above kSegment go as kSegment pieces, all posted at once: each
// piece is small enough to go eagerly (shm's eager limit), so the root copies everything into
// the peers' rings and leaves, where one rendezvous message per peer made it wait until every
// receiver had been scheduled to fetch its copy and answer (4 ranks on 2 cores, 32K: 14 -> ~1.5
// us; 128K: 21 -> ~5 us; tuning/shm-2vcpu.txt). Every rank computes the same pieces, and pieces
// from one sender match in order, so piece i lands at offset i * kSegment.
// From kPiecesBelow up the copy dominates the wait: one message per peer, whose rendezvous lets
// every receiver copy straight from the root's buffer (CMA), all at once: one copy per receiver
// instead of two (into the ring, out of it), and no receiver waits for a forwarding rank as in
// binomial (4 ranks, 1M: ~120-200 us against binomial's ~200 and 16K pieces' ~140-210).
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

constexpr size_t kSegment = 16 * 1024;
constexpr size_t kPiecesBelow = 256 * 1024;

// Posts every message of this rank: recv(off, len) from the root, or at the root
// send(peer, off, len) to each other rank.
template <typename Recv, typename Send>
Status postLinear(int rank, int p, int root, size_t bytes, Recv recv, Send send) {
  const size_t piece = bytes < kPiecesBelow ? kSegment : bytes;
  for (size_t off = 0; off < bytes; off += piece) {
    const size_t len = bytes - off < piece ? bytes - off : piece;
    if (rank != root) {
      RRT_TRY(recv(off, len));
    } else {
      // The next rank after the root first, as binomial's nearest child: any order is correct.
      for (int i = 1; i < p; ++i) RRT_TRY(send(fromRelative(i, root, p), off, len));
    }
  }
  return Status::Ok;
}

class BcastLinear final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    if (posted_) {
      if (!idle()) return Status::InProgress;
      return error_;
    }
    posted_ = true;
    const int p = size(), root = args_.root;
    const size_t bytes = args_.count * args_.typeSize;
    if (p == 1 || bytes == 0) return Status::Ok;
    char* buf = static_cast<char*>(args_.rbuf);
    RRT_TRY(postLinear(
        rank(), p, root, bytes, [&](size_t off, size_t len) { return recv(root, buf + off, len); },
        [&](int peer, size_t off, size_t len) { return send(peer, buf + off, len); }));
    if (!idle()) return Status::InProgress;
    return error_;
  }

 private:
  bool posted_ = false;
};

}  // namespace

Task* makeBcastLinear(proto::Comm& c, CollArgs&& a) { return new BcastLinear(c, std::move(a)); }

// The task's messages, posted at once; finish() waits for them.
Status bcastLinearDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), root = a.root;
  const size_t bytes = a.count * a.typeSize;
  if (p == 1 || bytes == 0) return Status::Ok;
  char* buf = static_cast<char*>(a.rbuf);
  return postLinear(
      d.rank(), p, root, bytes, [&](size_t off, size_t len) { return d.recv(root, buf + off, len); },
      [&](int peer, size_t off, size_t len) { return d.send(peer, buf + off, len); });
}

}  // namespace rrt::coll
