// Reduce through the communicator's shared-memory segment: blocking calls of a communicator
// whose ranks all share memory (one node). Commutative ops only. The pipeline (copy in, fold,
// copy out by piece) is shm_reduction.h's; only the root copies out.
//
// Cost per rank: n copied into the own slot, (p-1)/p n loaded from peers' slots and reduced;
// at the root also (p-1)/p n loaded and copied out; 3 (p-1) counter waits per piece of p s
// bytes and no message. Against Rabenseifner (reduce-scatter + gather, 2 log p alpha + 2 (p-1)/p
// n beta) the root's gather becomes loads, and every beta a load instead of a copy through the
// rings or the kernel.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/shm_reduction.h"

namespace rrt::coll {

Status reduceShmDirect(Direct& d, const CollArgs& a) { return shmReduction(d, a, ShmResult::kRoot); }

}  // namespace rrt::coll
