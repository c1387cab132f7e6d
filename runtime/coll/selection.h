// Algorithm selection: a table of rules (collective x message size x rank count x memory type
// -> algorithm), overridable per collective by RRT_COLL_<NAME>=<algorithm>, and printable.
//
// The size a rule compares is the bytes of one rank's contribution: count * type size for
// bcast / reduce / allreduce / scan / exscan, one block for allgather / alltoall / gather /
// scatter, the average block for the v-variants and reduce_scatter, 0 for barrier.
// Rules are tried in order; the first that matches and whose algorithm can run the call (e.g.
// a non-commutative op rules out algorithms that reorder operands) wins. Every collective ends
// in a catch-all rule with an algorithm that runs everything. The defaults and the
// measurements behind them are in runtime/coll/tuning/.
//
// Environment (read once, or by reloadSelection()):
//   RRT_COLL_<NAME>   force the algorithm of collective NAME (BARRIER, BCAST, REDUCE,
//                     ALLREDUCE, ALLGATHER, ALLGATHERV, ALLTOALL, ALLTOALLV, GATHER, GATHERV,
//                     SCATTER, SCATTERV, REDUCE_SCATTER, SCAN, EXSCAN); "auto" = the table.
//                     An algorithm that cannot run a call falls back to the table for it.
//   RRT_COLL_SEGMENT  segment size of the pipelined algorithms (ring allreduce / reduce_scatter,
//                     chain bcast), bytes with K/M suffixes; default 64K.
//   RRT_COLL_SHM_SLOT  each rank's slot in a communicator's shared segment (shm allreduce;
//                     allreduce_shm.cc), bytes; default 2M.
//   RRT_COLL_SHM_SHARED_OUTPUT  shm allreduce of n bytes over p ranks: peers read a shared
//                     (rrt_alloc_mem) output where it lies from n >= this p^2, shm allgather
//                     each rank's block from blocks of 4x this; default 256K
//                     (shm_reduction.cc, allgather_shm.cc say why).
#pragma once

#include <cstdio>

#include "runtime/coll/coll.h"
#include "runtime/coll/direct.h"
#include "runtime/coll/task.h"

namespace rrt::coll {

enum AlgoFlags : unsigned {
  kNeedsCommutative = 1u << 0,  // reorders operands: only for commutative ops
  kNodeAware = 1u << 1,         // chosen by the table only for a comm worth a hierarchy
  kSharedMemory = 1u << 2,      // every rank must share memory with every other (one node);
                                // blocking calls only: a direct form and no task
};

// What a call's selection knows beyond its arguments (bits, combined with |).
enum CallShape : unsigned {
  kShapeNodeAware = 1u << 0,     // the comm spans several nodes with several ranks on some
  kShapeSharedMemory = 1u << 1,  // every rank of the comm shares memory with this one
  kShapeDirect = 1u << 2,        // a blocking call on host buffers: may run a direct form
  // Every rank of the comm shares memory with this one and the protocol moves messages to
  // them by a single copy (CMA) from kSingleCopyShapeBytes or less: on CPUs where that beats
  // two copies through shared memory from a few KiB (transport/shm/copy_path.h), the
  // message-based algorithms beat the shared-memory ones at mid sizes.
  kShapeSingleCopy = 1u << 3,
};
constexpr size_t kSingleCopyShapeBytes = 16 * 1024;
// The smallest message sent to a local rank by a single copy (P2p::localSingleCopyFrom;
// SIZE_MAX: never), and whether that is from mid sizes (kShapeSingleCopy's condition).
size_t localSingleCopyFrom();
bool singleCopyMidSizes();

struct Algorithm {
  CollKind kind;
  const char* name;
  TaskFactory create;
  unsigned flags;
  const char* cost;  // one line: alpha-beta-gamma cost
  DirectFn direct = nullptr;  // its blocking form without a task, if it has one (direct.h)
};

enum class RankClass : uint8_t { Any, Pow2, NonPow2 };

struct Rule {
  CollKind kind;
  memory::MemType mem;
  int minRanks, maxRanks;  // inclusive
  RankClass ranks;
  size_t minBytes, maxBytes;  // [minBytes, maxBytes)
  const char* algorithm;
  unsigned shapes = 0;  // CallShape bits a call must have for the rule to apply
};

const char* kindName(CollKind k);      // "allreduce"
const char* kindEnvName(CollKind k);   // "RRT_COLL_ALLREDUCE"

// The algorithm for this call (override first, then the table). Never nullptr for valid args.
// shape: CallShape bits (a forced algorithm the shape rules out falls back to the table).
const Algorithm* select(const CollArgs& args, int ranks, unsigned shape = 0);
// The table's choice alone (no override), for a call of this shape.
const Algorithm* selectFromTable(CollKind kind, size_t bytes, int ranks, memory::MemType mem,
                                 bool commutative, unsigned shape = 0);
const Algorithm* findAlgorithm(CollKind kind, const char* name);
// Every algorithm of kind (for the tests): fills out, returns how many.
int algorithmsOf(CollKind kind, const Algorithm** out, int max);
// The size a rule compares for these arguments.
size_t selectionBytes(const CollArgs& args, int ranks);

// Re-reads RRT_COLL_* (tests set variables, then reload).
void reloadSelection();
size_t segmentBytes();
size_t shmSlotBytes();  // RRT_COLL_SHM_SLOT
size_t shmSharedOutputBytes();  // RRT_COLL_SHM_SHARED_OUTPUT

// Prints the overrides in force, the rules, and the algorithm chosen for each collective and
// size range at a few rank counts. rrt_info calls it.
void printSelection(FILE* out);

}  // namespace rrt::coll
