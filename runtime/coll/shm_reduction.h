// The shared-memory reduction pipeline behind allreduce_shm.cc and reduce_shm.cc: blocking
// calls of a communicator whose ranks all share memory (one node), through its segment
// (node_segment.h). Commutative ops only.
//
// The vector is cut into p regions (equal ones for allreduce and reduce, the receive counts for
// reduce-scatter), region j reduced by rank j alone (so every rank that gets the result gets
// the same bits), and the regions are walked together in pieces of up to s bytes each. Piece k
// on rank r:
//   copy in   once every rank's "done" covers piece k - D (nobody reads slot buffer k mod D any
//             more), copy piece k of every other region of the input into the own slot's
//             buffer k mod D; count "in".
//   fold      once every rank's "in" covers k: in L1-sized chunks, copy the input's own region
//             into the own slot, fold in every other rank's copy of it (from their slots), and
//             (where this rank gets the result) copy it to the output; count "reduced".
//   copy out  where this rank gets the whole result: as each rank's "reduced" covers k, copy
//             its region's piece from its slot to the output. Count "done".
// Copy-in runs one piece ahead of the rest, so that a rank that is early copies instead of
// waiting.
//
// Shared buffers (rrt_alloc_mem, where the segment says ranks may map each other's): a rank
// whose input is shared copies nothing in, and peers fold its part from the input where it
// lies; an allreduce's large shared output is the rank's accumulator, and peers copy the result
// out of it. Each rank says which of its buffers are shared in the segment (node_segment.h),
// and a rank with a shared buffer returns only once every peer counted the call done. When every
// rank's input is shared, pieces are a whole slot buffer (only accumulators go through the
// slots): p times fewer rounds of waits. Per rank at 2 ranks this moves 2.5 n instead of 4 n
// through memory: what a ring over shared buffers moves (bench/ring_bound.c). Every wait keeps rrt's progress running and fails with ErrProcFailed when the rank
// waited for dies.
#pragma once

#include "runtime/coll/direct.h"

namespace rrt::coll {

// Who gets what: every rank the whole vector (allreduce), the root (reduce), or every rank its
// own region at the start of its output (reduce-scatter).
enum class ShmResult { kEveryRank, kRoot, kOwnRegion };

// The call a (allreduce, reduce to a.root, reduce-scatter) by the pipeline above. Without a
// segment (every rank learnt the same), or with elements larger than a piece, the same call by
// messages instead (recursive doubling; binomial for reduce; recursive halving for
// reduce-scatter).
Status shmReduction(Direct& d, const CollArgs& a, ShmResult result);

}  // namespace rrt::coll
