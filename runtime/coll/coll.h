// Collectives: the entry of runtime/coll for the C API (runtime/api/coll_api.cc) and for rrt's
// own internal users (e.g. comm_split could run an allgather through coll::run).
//
// Contract
//   - start() resolves the algorithm (selection.h), takes the collective's sequence number from
//     comm.collSeq++ (its tag on comm.collCtx()), and runs the algorithm as far as it goes
//     without waiting (its scratch memory comes from the communicator's cache, scratch_cache.h).
//     It returns Ok with *out set to a request of kind Coll that completes later (or already
//     did); the caller owns it (rrt_wait, or core::requestRelease once complete). Every rank
//     of comm must start its collectives on comm in the same order; several may be outstanding
//     at once.
//   - The arguments are checked by the caller (runtime/api); start() trusts them.
//   - Progress: every unfinished collective is advanced by one poller registered with
//     core::addPoller (engine.cc), i.e. by whatever waits (rrt_wait, rrt_test, a blocking call).
//   - Internal messages go through the P2p seam below: by default the protocol layer
//     (proto::isend / proto::irecv, bound by bindProtoP2p()); the unit tests put an in-memory
//     matching engine there so that every algorithm runs with many ranks inside one process.
//   - Memory types: every buffer of one call is of args.memType. Reductions run on the host;
//     device buffers are an extension point (GPU kernels in runtime/gpu).
//   - Hierarchy: when comm spans several nodes with several ranks on some (node ids from
//     wire-up, through P2p::nodeOf), allreduce and bcast run node-aware algorithms
//     (allreduce_hierarchical.cc, bcast_hierarchical.cc): combine on each node, then across
//     nodes between one rank per node, then fan out on each node. They address the parent
//     communicator's ranks directly, so every message keeps the collective's one tag and the
//     per-pair ordering of the protocol keeps the phases apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <rrt/rrt.h>

#include "runtime/coll/op.h"
#include "runtime/core/request.h"
#include "runtime/core/status.h"
#include "runtime/memory/mem_type.h"
#include "runtime/proto/comm.h"

namespace rrt::coll {

enum class CollKind : uint8_t {
  Barrier,
  Bcast,
  Reduce,
  Allreduce,
  Allgather,
  Allgatherv,
  Alltoall,
  Alltoallv,
  Gather,
  Gatherv,
  Scatter,
  Scatterv,
  ReduceScatter,  // reduce_scatter and reduce_scatter_block (equal counts)
  Scan,
  Exscan,
  Count
};
constexpr int kCollKinds = static_cast<int>(CollKind::Count);

// Everything an algorithm needs, in bytes where no reduction is involved.
struct CollArgs {
  CollKind kind = CollKind::Barrier;
  const void* sbuf = nullptr;  // may be RRT_IN_PLACE where MPI allows it
  void* rbuf = nullptr;        // may be RRT_IN_PLACE for scatter(v) at the root
  size_t count = 0;            // bcast / reduce / allreduce / scan / exscan: elements of type
  size_t typeSize = 0;         // bytes of one element of the type (reductions, bcast)
  size_t blockBytes = 0;       // allgather / alltoall / gather / scatter: bytes per rank
  int root = 0;
  Reducer reducer;             // reductions
  // v-variants, per rank of comm, in bytes: allgatherv (recv*), alltoallv (send* and recv*),
  // gatherv (recv* at the root), scatterv (send* at the root), reduce_scatter (recvBytes =
  // recvcounts * typeSize; offsets are the prefix sums).
  // Filled from sizesPool() (vector_pool.h); the destructor gives their storage back.
  std::vector<size_t> sendBytes, sendOffs, recvBytes, recvOffs;
  memory::MemType memType = memory::MemType::Host;

  CollArgs() = default;
  CollArgs(const CollArgs&) = default;
  CollArgs(CollArgs&&) = default;
  CollArgs& operator=(const CollArgs&) = default;
  CollArgs& operator=(CollArgs&&) = default;
  ~CollArgs();
};

inline bool inPlace(const void* p) { return p == RRT_IN_PLACE; }

// The bytes a v-variant's layout spans: the largest offs[i] + bytes[i].
inline size_t vectorExtent(const std::vector<size_t>& bytes, const std::vector<size_t>& offs) {
  size_t e = 0;
  for (size_t i = 0; i < bytes.size() && i < offs.size(); ++i)
    if (offs[i] + bytes[i] > e) e = offs[i] + bytes[i];
  return e;
}

// Posts the collective. See the contract above.
Status start(proto::Comm& comm, CollArgs&& args, core::Request** out);
// Blocking: the algorithm's direct form when it has one (direct.h), else start + wait +
// release. Takes the same sequence number either way.
Status run(proto::Comm& comm, CollArgs&& args);
// Waits for a collective's request and releases it: its outcome (left with the engine when
// the wait timed out).
Status await(core::Request* req);

// ---- the p2p seam ----------------------------------------------------------------------------
struct P2p {
  Status (*isend)(proto::Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dst,
                  int tag, uint8_t sendFlags, core::Request** out) = nullptr;
  Status (*irecv)(proto::Comm& comm, uint32_t ctx, void* buf, size_t bytes, int src, int tag,
                  core::Request** out) = nullptr;
  // Node id of a world rank (from wire-up); nullptr: every rank on one node.
  uint32_t (*nodeOf)(int worldRank) = nullptr;
  // Whether this rank reaches worldRank through shared memory (same node, shm transport on);
  // nullptr: never (the shared-memory algorithms are not offered).
  bool (*sharesMemory)(int worldRank) = nullptr;
  // The smallest message the protocol moves to a rank it shares memory with by a single copy
  // (CMA), with the settings in force; nullptr or SIZE_MAX: never.
  size_t (*localSingleCopyFrom)() = nullptr;
  // The job's id, safe for file names (node_segment.h names its segments after it).
  const char* (*jobId)() = nullptr;
  // Reports a peer found dead outside the protocol layer (a shared-memory wait): the protocol
  // fails its operations and applies the failure policy (RRT_PEER_FAILURE).
  void (*peerFailed)(int worldRank) = nullptr;
};
void setP2p(const P2p& p2p);
const P2p& p2p();
// Binds the protocol layer (proto::isend / proto::irecv). Idempotent; the C entry points call it.
void bindProtoP2p();

// The node id of every rank of comm (through P2p::nodeOf), for the node-aware algorithms.
std::vector<uint32_t> commNodeIds(const proto::Comm& comm);

// Collectives still running (for finalize checks and tests).
size_t activeCount();

// The scratch cache of comm (scratch_cache.h); nullptr before its first collective. For tests.
class ScratchCache;
const ScratchCache* scratchCacheOf(const proto::Comm& comm);

// Tag of a collective with sequence number seq (non-negative, <= RRT_TAG_UB).
constexpr int collTag(uint32_t seq) { return static_cast<int>(seq & RRT_TAG_UB); }

}  // namespace rrt::coll
