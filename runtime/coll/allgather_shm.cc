// Allgather through the communicator's shared-memory segment (node_segment.h): blocking calls
// of a communicator whose ranks all share memory (one node).
//
// Each rank's block is walked in pieces of one slot buffer. Piece k on rank r:
//   copy in   once the own buffer of piece k is free (the segment's rule), copy piece k of the
//             own block into it; count "in".
//   copy out  as each rank's "in" covers k, copy its piece from its buffer to its place in the
//             output; count "done".
// Copy-in runs one piece ahead of the copy-out, so that a rank that is early copies instead of
// waiting.
//
// Cost per rank: b copied into the own slot (and once into the own place of the output unless
// in place), (p-1) b loaded from the peers' slots, p-1 counter waits per piece and no message.
// A ring or the scattered exchange moves the same (p-1) b through the rings (two copies) or
// the kernel (CMA, pinning every page) and pays (p-1) alpha. Measured in tuning/shm-2vcpu.txt.
#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_segment.h"

namespace rrt::coll {

Status allgatherShmDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const size_t b = a.blockBytes;
  char* const out = static_cast<char*>(a.rbuf);
  const char* const own = inPlace(a.sbuf) ? out + static_cast<size_t>(r) * b
                                          : static_cast<const char*>(a.sbuf);
  Direct::copy(out + static_cast<size_t>(r) * b, own, b);
  if (p == 1) return Status::Ok;
  NodeSegment* seg = nullptr;
  RRT_TRY(commNodeSegment(d, &seg));
  if (!seg) return allgatherRingDirect(d, a);  // every rank learnt the same
  const size_t s = seg->bufferBytes();
  const uint64_t pieces = (b + s - 1) / s;
  const uint64_t base = seg->sequence();
  seg->sequence() += pieces;
  auto copyIn = [&](uint64_t k) {
    const uint64_t g = base + k;
    RRT_TRY(seg->waitBufferFree(g));
    Direct::copy(seg->buffer(r, g), own + k * s, std::min(s, b - k * s));
    seg->store(NodeSegment::kIn, g + 1);
    return Status::Ok;
  };
  RRT_TRY(copyIn(0));
  for (uint64_t k = 0; k < pieces; ++k) {
    if (k + 1 < pieces) RRT_TRY(copyIn(k + 1));
    const uint64_t g = base + k;
    const size_t n = std::min(s, b - k * s);
    for (int step = 1; step < p; ++step) {  // from the right neighbour on: spread the loads
      const int j = (r + step) % p;
      RRT_TRY(seg->waitAtLeast(j, NodeSegment::kIn, g + 1));
      Direct::copy(out + static_cast<size_t>(j) * b + k * s, seg->buffer(j, g), n);
    }
    seg->store(NodeSegment::kDone, g + 1);
  }
  return Status::Ok;
}

}  // namespace rrt::coll
