// Reduce-scatter through the communicator's shared-memory segment: blocking calls of a
// communicator whose ranks all share memory (one node). Commutative ops only. The pipeline (copy
// in, fold, by piece) is shm_reduction.h's, its regions the receive counts; each rank folds its
// own region straight into its output and copies nothing out.
//
// Cost per rank: the other regions, n - n_r, copied into the own slot; (p-1) n_r loaded from
// peers' slots and reduced; 2 (p-1) counter waits per piece and no message. The ring moves
// (p-1)/p n through the rings or the kernel (CMA) in p-1 steps of alpha each; recursive
// halving log p of them. Measured in tuning/shm-2vcpu.txt.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/shm_reduction.h"

namespace rrt::coll {

Status reduceScatterShmDirect(Direct& d, const CollArgs& a) {
  return shmReduction(d, a, ShmResult::kOwnRegion);
}

}  // namespace rrt::coll
