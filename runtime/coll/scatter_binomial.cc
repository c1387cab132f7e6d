// Scatter: binomial tree over ranks relative to the root (the reverse of gather_binomial.cc).
// Each inner node receives its subtree's blocks in one message and forwards the children's
// parts. Cost: ceil(log2 p) alpha + (p-1)/p N beta. Default at every size here. Any p. A root of
// rank 0 sends straight from its buffer; leaves receive straight into theirs.
#include <cstring>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class ScatterBinomial final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), root = args_.root, rel = toRelative(rank(), root, p);
    const size_t b = args_.blockBytes, up = static_cast<size_t>(p);
    const bool isRoot = rel == 0;
    int children[32];
    const int nc = binomialChildren(rel, p, children);
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          if (b == 0) return Status::Ok;
          if (isRoot) {
            const char* in = bytePtr(args_.sbuf);
            if (root == 0) {
              src_ = in;
            } else {  // relative order: block i is rank root + i's
              char* t = scratch(up * b);
              if (!t) return Status::ErrNoMemory;
              const size_t head = up - static_cast<size_t>(root);
              copy(t, in + static_cast<size_t>(root) * b, head * b);
              copy(t + head * b, in, static_cast<size_t>(root) * b);
              src_ = t;
            }
          } else {
            const int parent = fromRelative(binomialParent(rel), root, p);
            if (nc == 0) {
              RRT_TRY(recv(parent, args_.rbuf, b));
              phase_ = Phase::Done;
              break;
            }
            char* t = scratch(static_cast<size_t>(binomialSubtreeSize(rel, p)) * b);
            if (!t) return Status::ErrNoMemory;
            RRT_TRY(recv(parent, t, static_cast<size_t>(binomialSubtreeSize(rel, p)) * b));
            src_ = t;
          }
          phase_ = Phase::Forward;
          break;
        }
        case Phase::Forward:
          for (int i = nc - 1; i >= 0; --i) {
            const int c = children[i];
            RRT_TRY(send(fromRelative(c, root, p), src_ + static_cast<size_t>(c - rel) * b,
                         static_cast<size_t>(binomialSubtreeSize(c, p)) * b));
          }
          if (!(isRoot && inPlace(args_.rbuf))) copy(args_.rbuf, src_, b);
          phase_ = Phase::Done;
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase { Start, Forward, Done };
  Phase phase_ = Phase::Start;
  const char* src_ = nullptr;
};

}  // namespace

Task* makeScatterBinomial(proto::Comm& c, CollArgs&& a) { return new ScatterBinomial(c, std::move(a)); }

// The task's steps in a row.
Status scatterBinomialDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), root = a.root, rel = toRelative(d.rank(), root, p);
  const size_t b = a.blockBytes, up = static_cast<size_t>(p);
  const bool isRoot = rel == 0;
  if (b == 0) return Status::Ok;
  int children[32];
  const int nc = binomialChildren(rel, p, children);
  const char* src;
  if (isRoot) {
    const char* in = static_cast<const char*>(a.sbuf);
    if (root == 0) {
      src = in;
    } else {  // relative order: block i is rank root + i's
      char* t = d.scratch(up * b);
      if (!t) return Status::ErrNoMemory;
      const size_t head = up - static_cast<size_t>(root);
      std::memcpy(t, in + static_cast<size_t>(root) * b, head * b);
      std::memcpy(t + head * b, in, static_cast<size_t>(root) * b);
      src = t;
    }
  } else {
    const int parent = fromRelative(binomialParent(rel), root, p);
    if (nc == 0) return d.recv(parent, a.rbuf, b);  // a leaf
    const size_t sub = static_cast<size_t>(binomialSubtreeSize(rel, p)) * b;
    char* t = d.scratch(sub);
    if (!t) return Status::ErrNoMemory;
    RRT_TRY(d.recv(parent, t, sub));
    RRT_TRY(d.wait());
    src = t;
  }
  for (int i = nc - 1; i >= 0; --i) {
    const int c = children[i];
    RRT_TRY(d.send(fromRelative(c, root, p), src + static_cast<size_t>(c - rel) * b,
                   static_cast<size_t>(binomialSubtreeSize(c, p)) * b));
  }
  if (!(isRoot && inPlace(a.rbuf))) std::memcpy(a.rbuf, src, b);
  return Status::Ok;
}

}  // namespace rrt::coll
