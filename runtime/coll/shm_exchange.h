// The schedule of the shared-memory exchanges (allgather_shm.cc, alltoall_shm.cc): every rank
// copies its data into its slot piece by piece, and every rank copies each peer's pieces out of
// the peer's slot. Piece k on rank r:
//   copy in   once the own buffer of piece k is free (the segment's rule), fill it; count "in".
//   copy out  as each rank j's "in" covers k, copy from j's buffer of piece k; count "done".
// Copy-in runs one piece ahead of the copy-out, so that a rank that is early copies instead of
// waiting. Peers are read from the right neighbour on, so that not every rank loads from the
// same slot at once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/coll/node_segment.h"

namespace rrt::coll {

// Data that peers may read where it lies (allgather: the rank's own block): from, bytes long,
// piece k at from + k * stride. A rank whose data is shared (rrt_alloc_mem memory, see
// node_segment.h) copies nothing in; its peers drain straight from it, and it returns only once
// every peer is done with the call.
struct ShmExchangeShare {
  const void* from = nullptr;
  size_t bytes = 0, stride = 0;
};

// fill(k, buffer): copy piece k of this rank's data into buffer (its own, of piece k).
// drain(j, k, src): copy piece k of rank j's data out of src (j's buffer of piece k, or j's
// shared data). share: nullptr, or this rank's data peers may read where it lies.
// Advances the segment's sequence by pieces on every rank alike.
template <typename Fill, typename Drain>
Status shmExchange(NodeSegment& seg, int p, int r, uint64_t pieces, Fill fill, Drain drain,
                   const ShmExchangeShare* share = nullptr) {
  if (pieces == 0) return Status::Ok;
  const uint64_t base = seg.sequence();
  seg.sequence() += pieces;
  bool shared = false, unused = false;
  if (share) {
    RRT_TRY(seg.waitBufferFree(base));
    seg.publish(base, share->from, share->bytes, nullptr, 0, &shared, &unused);
  }
  auto copyIn = [&](uint64_t k) {
    const uint64_t g = base + k;
    RRT_TRY(seg.waitBufferFree(g));
    if (!shared) fill(k, seg.buffer(r, g));
    seg.store(NodeSegment::kIn, g + 1);
    return Status::Ok;
  };
  Status s = copyIn(0);
  for (uint64_t k = 0; k < pieces && s == Status::Ok; ++k) {
    if (k + 1 < pieces && (s = copyIn(k + 1)) != Status::Ok) break;
    const uint64_t g = base + k;
    for (int step = 1; step < p && s == Status::Ok; ++step) {
      const int j = (r + step) % p;
      if ((s = seg.waitAtLeast(j, NodeSegment::kIn, g + 1)) != Status::Ok) break;
      // j's data where it lies, mapped once j counted piece 0 in (its line is read then only:
      // j may write it again for a later call once this rank is past piece 0).
      const char** at = seg.peerAddresses();
      if (share && k == 0 && (s = seg.mapPeer(base, j, &at[j], &at[p + j])) != Status::Ok) break;
      drain(j, k, share && at[j] ? at[j] + k * share->stride : seg.buffer(j, g));
    }
    if (s == Status::Ok) seg.store(NodeSegment::kDone, g + 1);
  }
  if (s == Status::Ok && shared) s = seg.waitPeersDone(base + pieces);
  // Failed with shared data: peers may still read it; the caller may free it once we return.
  if (s != Status::Ok && shared) seg.settle(base + pieces);
  return s;
}

}  // namespace rrt::coll
