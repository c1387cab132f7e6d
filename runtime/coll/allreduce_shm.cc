// Allreduce through the communicator's shared-memory segment: blocking calls of a communicator
// whose ranks all share memory (one node). Commutative ops only. The pipeline (copy in, fold,
// copy out by piece) is shm_reduction.h's, with every rank copying out.
//
// Cost per rank: n copied into the own slot, (p-1)/p n loaded from peers' slots and reduced,
// (p-1)/p n loaded from peers' slots and copied out, 3 (p-1) counter waits per piece of p s
// bytes and no message. A ring moves the same 2 (p-1)/p n through rings or the kernel (CMA
// pins every page: about half the rate of a load, bench/ring_bound.c) and pays 2 (p-1) alpha;
// the copy-in is this algorithm's price. On this machine it wins from 32K at 2 ranks, 16K at 3, 8K at 4
// and 8 (tuning/shm-2vcpu.txt).
#include "runtime/coll/algorithms.h"
#include "runtime/coll/shm_reduction.h"

namespace rrt::coll {

Status allreduceShmDirect(Direct& d, const CollArgs& a) { return shmReduction(d, a, ShmResult::kEveryRank); }

}  // namespace rrt::coll
