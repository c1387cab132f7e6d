// Barrier through the communicator's shared-memory segment (node_segment.h): blocking calls of
// a communicator whose ranks all share memory (one node).
//
// Every rank counts its arrival in its own counter and waits until every peer's counter shows
// the same call: one round, no message, no leader. Cost: (p-1) counter loads per rank (a cache
// line each) after the last rank arrives. Against linear (2 alpha, two rounds through rank 0)
// the last rank to arrive releases every other at once, and on an oversubscribed node no rank
// has to be scheduled in between to pass the release on. Wins at small p, where p-1 lines are
// cheap to poll; measured in tuning/shm-2vcpu.txt.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_segment.h"

namespace rrt::coll {

Status barrierShmDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  if (p == 1) return Status::Ok;
  NodeSegment* seg = nullptr;
  RRT_TRY(commNodeSegment(d, 0, &seg));
  if (!seg) return barrierLinearDirect(d, a);  // every rank learnt the same
  // One piece of the common sequence, whose buffer nobody touches: kDone says at once that
  // this rank reads nothing of it (the buffer rule of later calls counts on kDone).
  const uint64_t g = seg->sequence()++;
  seg->store(NodeSegment::kIn, g + 1);
  seg->store(NodeSegment::kDone, g + 1);
  for (int step = 1; step < p; ++step)  // from the right neighbour on, as the others
    RRT_TRY(seg->waitAtLeast((r + step) % p, NodeSegment::kIn, g + 1));
  return Status::Ok;
}

}  // namespace rrt::coll
