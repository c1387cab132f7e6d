// Where each rank's block lives in an allgather(v) receive buffer, shared by the allgather
// algorithms. Uniform (allgather): block i at i * b on every rank, so any run of consecutive
// blocks is one contiguous message. Otherwise (allgatherv) displacements are local to each rank
// and runs are sent block by block (counts agree on every rank; displacements need not).
#pragma once

#include <vector>

#include "runtime/coll/coll.h"

namespace rrt::coll {

struct Blocks {
  std::vector<size_t> off, len;
  bool uniform = false;

  static Blocks of(const CollArgs& a, int p) {
    Blocks b;
    if (a.kind == CollKind::Allgatherv) {
      b.off = a.recvOffs;
      b.len = a.recvBytes;
    } else {
      b.uniform = true;
      for (int i = 0; i < p; ++i) {
        b.off.push_back(static_cast<size_t>(i) * a.blockBytes);
        b.len.push_back(a.blockBytes);
      }
    }
    return b;
  }
  size_t total() const {
    size_t t = 0;
    for (size_t l : len) t += l;
    return t;
  }
};

}  // namespace rrt::coll
