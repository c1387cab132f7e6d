// Reduce: binomial tree.
// Cost: ceil(log2 p) (alpha + n beta + n gamma). Latency-optimal: wins for small and medium
// messages, and at p <= 4 at every size (total work (p-1) n (beta + gamma), nothing copied).
// Any p. Keeps rank order, so it serves non-commutative ops too: then the tree is
// rooted at rank 0 (where every subtree is a contiguous rank range, combined low op high) and
// rank 0 sends the result to the root, one extra step when root != 0.
// Memory: two scratch buffers of n bytes at inner nodes (received data and the running result
// alternate between them, so nothing is copied); leaves send their input directly.
#include <cstring>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class ReduceBinomial final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), root = args_.root;
    const bool commutative = args_.reducer.commutative;
    const int treeRoot = commutative ? root : 0;
    const int rel = toRelative(rank(), treeRoot, p);
    const size_t bytes = args_.count * args_.typeSize;
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      switch (phase_) {
        case Phase::Start: {
          const bool rootInPlace = rank() == root && inPlace(args_.sbuf);
          acc_ = rootInPlace ? args_.rbuf : args_.sbuf;
          if (p == 1 || bytes == 0) {
            if (rank() == root) copy(args_.rbuf, acc_, bytes);
            return Status::Ok;
          }
          nchild_ = binomialChildren(rel, p, children_);
          if (nchild_ > 0) {
            // Receive i lands in buf_[i % 2]; the last one holds the result: make it rbuf at
            // the root when the input is elsewhere.
            const bool finalHere = rank() == root && rel == 0 && !rootInPlace;
            buf_[0] = buf_[1] = nullptr;
            if (finalHere) buf_[(nchild_ - 1) % 2] = bytePtr(args_.rbuf);
            for (int i = 0; i < (nchild_ > 1 ? 2 : 1); ++i)
              if (!buf_[i] && !(buf_[i] = scratch(bytes))) return Status::ErrNoMemory;
            RRT_TRY(recv(fromRelative(children_[0], treeRoot, p), buf_[0], bytes));
          }
          child_ = 0;
          phase_ = Phase::Children;
          break;
        }
        case Phase::Children:
          if (child_ < nchild_) {
            // acc_ holds ranks [rel, rel + m), the child's data the next higher range.
            char* got = buf_[child_ % 2];
            reduce(acc_, got, args_.count);
            acc_ = got;
            if (++child_ < nchild_)
              RRT_TRY(recv(fromRelative(children_[child_], treeRoot, p), buf_[child_ % 2], bytes));
            break;
          }
          phase_ = Phase::Up;
          break;
        case Phase::Up:
          phase_ = Phase::Done;
          if (rel != 0) {
            RRT_TRY(send(fromRelative(binomialParent(rel), treeRoot, p), acc_, bytes));
            if (rank() == root) phase_ = Phase::FromZero;  // non-commutative, root != 0
          } else if (rank() == root) {
            copy(args_.rbuf, acc_, bytes);
          } else {
            RRT_TRY(send(root, acc_, bytes));  // rank 0 of a non-commutative reduce
          }
          break;
        case Phase::FromZero:
          phase_ = Phase::Done;
          RRT_TRY(recv(0, args_.rbuf, bytes));
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase { Start, Children, Up, FromZero, Done };
  Phase phase_ = Phase::Start;
  const void* acc_ = nullptr;  // the running result (the input until the first child)
  char* buf_[2] = {};
  int children_[32] = {};
  int nchild_ = 0, child_ = 0;
};

}  // namespace

Task* makeReduceBinomial(proto::Comm& c, CollArgs&& a) { return new ReduceBinomial(c, std::move(a)); }

// The task's steps in a row; its comments hold here too.
Status reduceBinomialDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), me = d.rank(), root = a.root;
  const int treeRoot = a.reducer.commutative ? root : 0;
  const int rel = toRelative(me, treeRoot, p);
  const size_t bytes = a.count * a.typeSize;
  const bool rootInPlace = me == root && inPlace(a.sbuf);
  const void* acc = rootInPlace ? a.rbuf : a.sbuf;
  auto toRoot = [&](const void* result) {
    if (result != a.rbuf) std::memcpy(a.rbuf, result, bytes);
  };
  if (p == 1 || bytes == 0) {
    if (me == root) toRoot(acc);
    return Status::Ok;
  }
  int children[32];
  const int nchild = binomialChildren(rel, p, children);
  if (nchild > 0) {
    char* buf[2] = {};
    if (me == root && rel == 0 && !rootInPlace) buf[(nchild - 1) % 2] = static_cast<char*>(a.rbuf);
    for (int i = 0; i < (nchild > 1 ? 2 : 1); ++i)
      if (!buf[i] && !(buf[i] = d.scratch(bytes))) return Status::ErrNoMemory;
    for (int c = 0; c < nchild; ++c) {
      char* got = buf[c % 2];
      RRT_TRY(d.recv(fromRelative(children[c], treeRoot, p), got, bytes));
      RRT_TRY(d.wait());
      a.reducer.apply(acc, got, a.count);
      acc = got;
    }
  }
  if (rel != 0) {
    RRT_TRY(d.send(fromRelative(binomialParent(rel), treeRoot, p), acc, bytes));
    if (me == root) {  // non-commutative, root != 0: acc may be rbuf (in place)
      RRT_TRY(d.wait());
      RRT_TRY(d.recv(0, a.rbuf, bytes));
    }
  } else if (me == root) {
    toRoot(acc);
  } else {
    RRT_TRY(d.send(root, acc, bytes));  // rank 0 of a non-commutative reduce
  }
  return Status::Ok;
}

}  // namespace rrt::coll
