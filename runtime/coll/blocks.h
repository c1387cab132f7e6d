// Where each rank's block lives in an allgather(v) receive buffer, shared by the allgather
// algorithms. Uniform (allgather): block i at i * b on every rank, so any run of consecutive
// blocks is one contiguous message. Otherwise (allgatherv) displacements are local to each rank
// and runs are sent block by block (counts agree on every rank; displacements need not).
// A view: it computes the uniform layout and reads allgatherv's from the task's own CollArgs
// (which outlive it), so making one allocates nothing.
#pragma once

#include <cstddef>

#include "runtime/coll/coll.h"

namespace rrt::coll {

class Blocks {
 public:
  static Blocks of(const CollArgs& a) {
    Blocks b;
    if (a.kind == CollKind::Allgatherv) {
      b.offs_ = a.recvOffs.data();
      b.lens_ = a.recvBytes.data();
    } else {
      b.block_ = a.blockBytes;
    }
    return b;
  }
  bool uniform() const { return lens_ == nullptr; }
  size_t off(int rank) const {
    const size_t r = static_cast<size_t>(rank);
    return uniform() ? r * block_ : offs_[r];
  }
  size_t len(int rank) const { return uniform() ? block_ : lens_[static_cast<size_t>(rank)]; }
  // The blocks of ranks [first, end) as messages: op(offset, bytes) once for the whole run when
  // the layout is uniform, else once per non-empty block. The first error stops it.
  template <typename Op>
  Status forRange(int first, int end, Op op) const {
    if (first >= end) return Status::Ok;
    if (uniform()) return op(off(first), block_ * static_cast<size_t>(end - first));
    for (int i = first; i < end; ++i)
      if (len(i) > 0)
        if (Status s = op(off(i), len(i)); s != Status::Ok) return s;
    return Status::Ok;
  }

 private:
  size_t block_ = 0;              // uniform: bytes of every block
  const size_t* offs_ = nullptr;  // allgatherv: per rank, from CollArgs
  const size_t* lens_ = nullptr;
};

}  // namespace rrt::coll
