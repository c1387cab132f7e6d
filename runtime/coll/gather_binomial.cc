// Gather: binomial tree over ranks relative to the root. Each inner node collects its subtree's
// blocks (contiguous in relative order) from all its children at once and passes them up.
// Cost: ceil(log2 p) alpha + (p-1)/p N beta (N = all blocks). Latency-optimal with every byte
// moving at most log2 p times: the default at every size here. Any p. Leaves send their input
// directly; a root of rank 0 gathers straight into its receive buffer.
#include <cstring>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class GatherBinomial final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), root = args_.root, rel = toRelative(rank(), root, p);
    const size_t b = args_.blockBytes, up = static_cast<size_t>(p);
    const bool isRoot = rel == 0;
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          const void* own = isRoot && inPlace(args_.sbuf)
                                ? bytePtr(args_.rbuf) + static_cast<size_t>(root) * b
                                : args_.sbuf;
          int children[32];
          const int nc = binomialChildren(rel, p, children);
          if (b == 0 || p == 1) {
            if (isRoot) copy(bytePtr(args_.rbuf) + static_cast<size_t>(root) * b, own, b);
            return Status::Ok;
          }
          if (nc == 0) {  // a leaf
            RRT_TRY(send(fromRelative(binomialParent(rel), root, p), own, b));
            phase_ = Phase::Done;
            break;
          }
          const size_t sub = static_cast<size_t>(binomialSubtreeSize(rel, p));
          buf_ = isRoot && root == 0 ? bytePtr(args_.rbuf) : scratch(sub * b);
          if (!buf_) return Status::ErrNoMemory;
          copy(buf_, own, b);
          for (int i = 0; i < nc; ++i) {
            const int c = children[i];
            RRT_TRY(recv(fromRelative(c, root, p), buf_ + static_cast<size_t>(c - rel) * b,
                         static_cast<size_t>(binomialSubtreeSize(c, p)) * b));
          }
          phase_ = Phase::Up;
          break;
        }
        case Phase::Up:
          phase_ = Phase::Done;
          if (!isRoot) {
            RRT_TRY(send(fromRelative(binomialParent(rel), root, p), buf_,
                         static_cast<size_t>(binomialSubtreeSize(rel, p)) * b));
          } else if (buf_ != args_.rbuf) {
            // buf_[i] is the block of rank root + i.
            char* out = bytePtr(args_.rbuf);
            const size_t head = up - static_cast<size_t>(root);
            copy(out + static_cast<size_t>(root) * b, buf_, head * b);
            copy(out, buf_ + head * b, static_cast<size_t>(root) * b);
          }
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase { Start, Up, Done };
  Phase phase_ = Phase::Start;
  char* buf_ = nullptr;
};

}  // namespace

Task* makeGatherBinomial(proto::Comm& c, CollArgs&& a) { return new GatherBinomial(c, std::move(a)); }

// The task's steps in a row.
Status gatherBinomialDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), root = a.root, rel = toRelative(d.rank(), root, p);
  const size_t b = a.blockBytes, up = static_cast<size_t>(p);
  const bool isRoot = rel == 0;
  char* const out = static_cast<char*>(a.rbuf);
  const char* own = isRoot && inPlace(a.sbuf) ? out + static_cast<size_t>(root) * b
                                              : static_cast<const char*>(a.sbuf);
  if (b == 0 || p == 1) {
    if (isRoot && own != out + static_cast<size_t>(root) * b)
      std::memcpy(out + static_cast<size_t>(root) * b, own, b);
    return Status::Ok;
  }
  const int parent = fromRelative(binomialParent(rel), root, p);
  int children[32];
  const int nc = binomialChildren(rel, p, children);
  if (nc == 0) return d.send(parent, own, b);  // a leaf
  const size_t sub = static_cast<size_t>(binomialSubtreeSize(rel, p));
  char* const buf = isRoot && root == 0 ? out : d.scratch(sub * b);
  if (!buf) return Status::ErrNoMemory;
  if (buf != own) std::memcpy(buf, own, b);
  for (int i = 0; i < nc; ++i) {
    const int c = children[i];
    RRT_TRY(d.recv(fromRelative(c, root, p), buf + static_cast<size_t>(c - rel) * b,
                   static_cast<size_t>(binomialSubtreeSize(c, p)) * b));
  }
  RRT_TRY(d.wait());
  if (!isRoot) return d.send(parent, buf, sub * b);
  if (buf != out) {  // buf[i] is the block of rank root + i
    const size_t head = up - static_cast<size_t>(root);
    std::memcpy(out + static_cast<size_t>(root) * b, buf, head * b);
    std::memcpy(out, buf + head * b, static_cast<size_t>(root) * b);
  }
  return Status::Ok;
}

}  // namespace rrt::coll
