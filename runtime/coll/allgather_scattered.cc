// Allgather(v): scattered, every receive and send posted at once (receives first, then the own
// block to rank+1, rank+2, ... so that not every rank sends to the same peer first).
// Cost: alpha + (p-1)/p N beta at best (N = all blocks), with all p-1 transfers competing for
// the memory system. Wins at few ranks on one node, above all when they outnumber the cores:
// the ring makes every step wait for one neighbour to be scheduled, p-1 times in a chain; here
// a rank waits once, for whichever peers are running, and on shared memory every receiver
// copies the sender's block at once (CMA). Any p, any block sizes.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/blocks.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

// Posts every message through post (a Task or a Direct), then copies the own block into place
// while they move.
template <typename Post>
Status postAll(const CollArgs& a, int r, int p, Post&& post) {
  const Blocks b = Blocks::of(a);
  char* out = static_cast<char*>(a.rbuf);
  const bool copyOwn = !inPlace(a.sbuf);
  const char* own = copyOwn ? static_cast<const char*>(a.sbuf) : out + b.off(r);
  for (int s = 1; s < p; ++s) {
    const int from = pairwiseFrom(r, s, p);
    if (b.len(from) > 0) RRT_TRY(post.recv(from, out + b.off(from), b.len(from)));
  }
  if (b.len(r) > 0)
    for (int s = 1; s < p; ++s) RRT_TRY(post.send(pairwiseTo(r, s, p), own, b.len(r)));
  if (copyOwn) post.copy(out + b.off(r), own, b.len(r));
  return Status::Ok;
}

class AllgatherScattered final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    if (!posted_) {
      posted_ = true;
      RRT_TRY(postAll(args_, rank(), size(), *this));
    }
    if (!idle()) return Status::InProgress;
    return error_;
  }

 private:
  template <typename Post>
  friend Status postAll(const CollArgs&, int, int, Post&&);
  bool posted_ = false;
};

}  // namespace

Task* makeAllgatherScattered(proto::Comm& c, CollArgs&& a) {
  return new AllgatherScattered(c, std::move(a));
}

// The task's messages, then one wait.
Status allgatherScatteredDirect(Direct& d, const CollArgs& a) {
  return postAll(a, d.rank(), d.size(), d);
}

}  // namespace rrt::coll
