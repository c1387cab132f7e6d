// The schedule of the shared-memory exchanges (allgather_shm.cc, alltoall_shm.cc): every rank
// copies its data into its slot piece by piece, and every rank copies each peer's pieces out of
// the peer's slot. Piece k on rank r:
//   copy in   once the own buffer of piece k is free (the segment's rule), fill it; count "in".
//   copy out  as each rank j's "in" covers k, copy from j's buffer of piece k; count "done".
// Copy-in runs one piece ahead of the copy-out, so that a rank that is early copies instead of
// waiting. Peers are read from the right neighbour on, so that not every rank loads from the
// same slot at once.
#pragma once

#include <cstdint>

#include "runtime/coll/node_segment.h"

namespace rrt::coll {

// fill(k, buffer): copy piece k of this rank's data into buffer (its own, of piece k).
// drain(j, k, buffer): copy piece k of rank j's data out of buffer (j's, of piece k).
// Advances the segment's sequence by pieces on every rank alike.
template <typename Fill, typename Drain>
Status shmExchange(NodeSegment& seg, int p, int r, uint64_t pieces, Fill fill, Drain drain) {
  const uint64_t base = seg.sequence();
  seg.sequence() += pieces;
  auto copyIn = [&](uint64_t k) {
    const uint64_t g = base + k;
    RRT_TRY(seg.waitBufferFree(g));
    fill(k, seg.buffer(r, g));
    seg.store(NodeSegment::kIn, g + 1);
    return Status::Ok;
  };
  if (pieces > 0) RRT_TRY(copyIn(0));
  for (uint64_t k = 0; k < pieces; ++k) {
    if (k + 1 < pieces) RRT_TRY(copyIn(k + 1));
    const uint64_t g = base + k;
    for (int step = 1; step < p; ++step) {
      const int j = (r + step) % p;
      RRT_TRY(seg.waitAtLeast(j, NodeSegment::kIn, g + 1));
      drain(j, k, seg.buffer(j, g));
    }
    seg.store(NodeSegment::kDone, g + 1);
  }
  return Status::Ok;
}

}  // namespace rrt::coll
