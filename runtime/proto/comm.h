// Communicators as the protocol layer sees them: a group of world ranks and two context ids,
// one for point-to-point traffic and one (ctx + 1) for collectives, so that collective traffic
// never matches a user receive.
//
// Context ids are agreed at creation (coll/ctx_agree.cc), so they are unique within every member
// process; disjoint groups may share one.
#pragma once

#include <cstdint>
#include <vector>

#include <rrt/rrt.h>

#include "runtime/core/request.h"
#include "runtime/core/status.h"

namespace rrt::proto {

struct Comm {
  rrt_comm_t handle = RRT_COMM_NULL;
  uint32_t ctx = 0;                 // point-to-point context; ctx + 1 is the collective one
  int rank = 0;                     // this process's rank in the communicator
  int size = 0;
  std::vector<int> worldRanks;      // comm rank -> world rank
  rrt_errhandler_t errhandler = RRT_ERRORS_RETURN;
  bool errhandlerSet = false;       // the program chose errhandler (rrt_comm_set_errhandler)
  uint32_t collSeq = 0;             // collectives started: the tag of the next one
  void* collState = nullptr;        // owned by runtime/coll (scratch buffers, topology)
  void (*collStateFree)(void*) = nullptr;
  // Intercommunicator: rank is the rank in the local group, size and worldRanks describe the
  // remote group (the ranks point-to-point addresses); both groups share ctx. No collectives.
  bool inter = false;
  // Requests that name this communicator and are not yet released: rrt_comm_free of a busy
  // communicator only marks it freed (its handle dies at once); the last release deletes it,
  // so operations in flight complete normally, as MPI_Comm_free promises.
  uint32_t pendingOps = 0;
  bool freed = false;

  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm() {
    if (collStateFree && collState) collStateFree(collState);
  }

  uint32_t collCtx() const { return ctx + 1; }
  int worldRank(int r) const { return worldRanks[static_cast<size_t>(r)]; }
};

namespace detail {
extern std::vector<Comm*> gCommTable;  // by handle; nullptr when freed
}  // namespace detail

// Handle table: RRT_COMM_WORLD = 0, RRT_COMM_SELF = 1, others from dup/split. Returns nullptr
// if unknown or freed. Inline: it runs on every call.
inline Comm* commLookup(rrt_comm_t handle) {
  const std::vector<Comm*>& t = detail::gCommTable;
  if (__builtin_expect(static_cast<size_t>(static_cast<unsigned>(handle)) >= t.size(), 0))
    return nullptr;
  return t[static_cast<size_t>(handle)];
}

// Every request that names c holds it until the request is released (core::requestRelease).
inline void commHold(Comm& c, core::Request* r) {
  ++c.pendingOps;
  r->commHeld = true;
}

}  // namespace rrt::proto

namespace rrt::proto {

// World and self, after the engine is up.
void commInitPredefined(int worldRank, int worldSize);
// Frees every communicator (finalize).
void commFinalizeAll();
// Collective over parent: the new communicator (nullptr for color RRT_UNDEFINED).
Status commSplit(Comm& parent, int color, int key, Comm** out);
Status commDup(Comm& parent, Comm** out);
// Collective over the listed ranks of parent only (ranks[i] becomes rank i; the caller is one of
// them); tag keeps concurrent creations over overlapping ranks apart.
Status commCreateGroup(Comm& parent, const std::vector<int>& ranks, int tag, Comm** out);
// Collective over all of parent, whose ranks form two disjoint groups: each member passes its own
// group (local, containing itself) and the other one (remote), as parent ranks in group order.
Status commCreateInter(Comm& parent, const std::vector<int>& local, const std::vector<int>& remote,
                       Comm** out);
Status commFree(rrt_comm_t handle);
// A communicator of parent's ranks peers (in that order; this process is rank), with an agreed
// context id, in the handle table.
Comm* commCreate(const Comm& parent, uint32_t ctx, int rank, const std::vector<int>& peers);

// Context ids of this process, for the agreement (coll/ctx_agree.cc). Ids are even (id + 1 is
// the collective context); every id in use is below the next free id, which only grows.
// ctxOffer: the smallest id >= floor that is free, not claimed and not offered by another
// agreement (so concurrent agreements start apart), held as offered until ctxWithdraw.
// ctxClaim: claims c for an agreement that votes for it; false when c is in use or claimed.
// ctxCommit: c is now in use.
uint32_t ctxOffer(uint32_t floor);
void ctxWithdraw(uint32_t c);
bool ctxClaim(uint32_t c);
void ctxUnclaim(uint32_t c);
void ctxCommit(uint32_t c);

}  // namespace rrt::proto
