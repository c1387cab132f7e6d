// Bcast through the communicator's shared-memory segment (node_segment.h): blocking calls of a
// communicator whose ranks all share memory (one node).
//
// The root copies the message into its slot piece by piece, a slot buffer each, as soon as that
// buffer is free (the segment's rule), and counts "in"; every other rank copies each piece out
// of the root's slot as the root's "in" covers it, and counts "done". The root waits for no
// receiver until it is kBuffers pieces ahead (2M with the default slot), and no receiver waits
// for a forwarding rank.
//
// Cost: n copied at the root and n at each receiver, by plain loads from shared memory (about
// twice the rate of CMA here: bench/ring_bound.c -b cma), n/s counter waits, no message.
// Linear's one message per peer (its form from 256K) moves n once per receiver, but by CMA, and
// its rendezvous holds the root until every receiver has fetched its copy: on an oversubscribed
// node, until each has been scheduled. Measured in tuning/shm-2vcpu.txt.
#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_segment.h"

namespace rrt::coll {

Status bcastShmDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank(), root = a.root;
  const size_t bytes = a.count * a.typeSize;
  if (p == 1 || bytes == 0) return Status::Ok;
  NodeSegment* seg = nullptr;
  RRT_TRY(commNodeSegment(d, bytes, &seg));
  if (!seg) return bcastLinearDirect(d, a);  // every rank learnt the same
  char* const buf = static_cast<char*>(a.rbuf);
  const size_t s = seg->bufferBytes();
  const uint64_t pieces = (bytes + s - 1) / s;
  const uint64_t base = seg->sequence();
  seg->sequence() += pieces;
  for (uint64_t k = 0; k < pieces; ++k) {
    const uint64_t g = base + k;
    const size_t off = k * s, len = std::min(s, bytes - off);
    if (r == root) {
      RRT_TRY(seg->waitBufferFree(g));
      Direct::copy(seg->buffer(r, g), buf + off, len);
      seg->store(NodeSegment::kIn, g + 1);
    } else {
      RRT_TRY(seg->waitAtLeast(root, NodeSegment::kIn, g + 1));
      Direct::copy(buf + off, seg->buffer(root, g), len);
    }
    seg->store(NodeSegment::kDone, g + 1);  // the root reads nothing of it
  }
  return Status::Ok;
}

}  // namespace rrt::coll
