// The communicator table and communicator creation. Every creation first agrees on a context
// id among its members (coll/ctx_agree.cc: a vote on the parent's collective context, with ids
// claimed by agreements still running skipped, so concurrent creations, MPI_Comm_idup's
// included, never share an id within a process). comm_split then has the parent's rank 0
// gather every member's (color, key), form the groups (ordered by key, then parent rank) and
// send each member its group. These exchanges run on the parent's collective context with
// negative tags, which no user receive and no collective can match.
#include "runtime/proto/comm.h"

#include <algorithm>
#include <vector>

#include "runtime/coll/ctx_agree.h"
#include "runtime/core/log.h"
#include "runtime/proto/matching.h"
#include "runtime/proto/p2p.h"

namespace rrt::proto {
namespace {

constexpr int kSplitTag = -2;
constexpr int kInterTag = -3;
constexpr int kSplitCtxTag = -4;
// create_group: negative tags below the fixed ones, one per user tag.
int groupTag(int tag) { return -16 - (tag & 0x3fffffff); }

std::vector<Comm*>& table() { return detail::gCommTable; }
uint32_t gNextCtx = 4;  // world uses 0/1, self 2/3; ids are even (id + 1: collectives)
std::vector<uint32_t> gClaimed;  // ids voted for by agreements still running
std::vector<uint32_t> gOffered;  // ids offered by agreements still waiting for their candidate
std::vector<Comm*> gFreedBusy;  // freed by the program, requests still held

void freeComm(Comm* c) {
  delete c;
}

void releaseComm(core::Request* r) {
  Comm* c = r->comm;
  if (--c->pendingOps != 0 || !c->freed) return;
  gFreedBusy.erase(std::find(gFreedBusy.begin(), gFreedBusy.end(), c));
  freeComm(c);
}

rrt_comm_t addToTable(Comm* c) {
  table().push_back(c);
  c->handle = static_cast<rrt_comm_t>(table().size() - 1);
  return c->handle;
}

}  // namespace

namespace detail {
std::vector<Comm*> gCommTable;
}  // namespace detail

void commInitPredefined(int worldRank, int worldSize) {
  commFinalizeAll();
  core::detail::gCommRelease = releaseComm;
  gNextCtx = 4;
  gClaimed.clear();
  gOffered.clear();
  Comm* world = new Comm;
  world->ctx = 0;
  world->rank = worldRank;
  world->size = worldSize;
  world->worldRanks.resize(static_cast<size_t>(worldSize));
  for (int i = 0; i < worldSize; ++i) world->worldRanks[static_cast<size_t>(i)] = i;
  addToTable(world);
  Comm* self = new Comm;
  self->ctx = 2;
  self->rank = 0;
  self->size = 1;
  self->worldRanks = {worldRank};
  addToTable(self);
}

void commFinalizeAll() {
  // Requests still unreleased at finalize are never waited on again: nothing may call back.
  core::detail::gCommRelease = [](core::Request*) {};
  for (Comm*& c : table()) {
    if (c) freeComm(c);
    c = nullptr;
  }
  table().clear();
  for (Comm* c : gFreedBusy) freeComm(c);
  gFreedBusy.clear();
}

Status commFree(rrt_comm_t handle) {
  if (handle == RRT_COMM_WORLD || handle == RRT_COMM_SELF) return Status::ErrComm;
  Comm* c = commLookup(handle);
  if (!c) return Status::ErrComm;
  table()[static_cast<size_t>(handle)] = nullptr;  // handles are never reused
  if (c->pendingOps > 0) {
    c->freed = true;
    gFreedBusy.push_back(c);
    return Status::Ok;
  }
  freeComm(c);
  return Status::Ok;
}

Status commSplit(Comm& parent, int color, int key, Comm** out) {
  *out = nullptr;
  uint32_t ctx;
  {
    std::vector<int> all(static_cast<size_t>(parent.size));
    for (int r = 0; r < parent.size; ++r) all[static_cast<size_t>(r)] = r;
    RRT_TRY(coll::agreeContext(parent, all, kSplitCtxTag, &ctx));
  }
  const uint32_t cctx = parent.collCtx();
  struct Entry {
    int32_t color, key;
  };
  Entry mine{color, key};
  std::vector<int32_t> reply;  // [newRank, n, world ranks...]

  if (parent.rank == 0) {
    const int n = parent.size;
    std::vector<Entry> all(static_cast<size_t>(n));
    all[0] = mine;
    std::vector<core::Request*> reqs;
    for (int r = 1; r < n; ++r) {
      core::Request* q;
      RRT_TRY(irecv(parent, cctx, &all[static_cast<size_t>(r)], sizeof(Entry), r, kSplitTag, &q));
      reqs.push_back(q);
    }
    Status bad = Status::Ok;
    for (core::Request* q : reqs) {
      Status s = waitRelease(q, nullptr);
      if (s != Status::Ok) bad = s;
    }
    RRT_TRY(bad);
    std::vector<std::vector<int32_t>> replies(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      std::vector<int32_t>& rep = replies[static_cast<size_t>(r)];
      const Entry& me = all[static_cast<size_t>(r)];
      if (me.color == RRT_UNDEFINED) {
        rep = {-1, 0};
        continue;
      }
      std::vector<int> members;
      for (int m = 0; m < n; ++m)
        if (all[static_cast<size_t>(m)].color == me.color) members.push_back(m);
      std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
        return all[static_cast<size_t>(a)].key < all[static_cast<size_t>(b)].key;
      });
      int newRank = static_cast<int>(std::find(members.begin(), members.end(), r) - members.begin());
      rep = {newRank, static_cast<int32_t>(members.size())};
      for (int m : members) rep.push_back(parent.worldRank(m));
    }
    reqs.clear();
    for (int r = 1; r < n; ++r) {
      const std::vector<int32_t>& rep = replies[static_cast<size_t>(r)];
      core::Request* q;
      RRT_TRY(isend(parent, cctx, rep.data(), rep.size() * sizeof(int32_t), r, kSplitTag, 0, &q));
      reqs.push_back(q);
    }
    for (core::Request* q : reqs) {
      Status s = waitRelease(q, nullptr);
      if (s != Status::Ok) bad = s;
    }
    RRT_TRY(bad);
    reply = replies[0];
  } else {
    core::Request* q;
    RRT_TRY(isend(parent, cctx, &mine, sizeof mine, 0, kSplitTag, 0, &q));
    RRT_TRY(waitRelease(q, nullptr));
    reply.resize(2 + static_cast<size_t>(parent.size));
    RRT_TRY(irecv(parent, cctx, reply.data(), reply.size() * sizeof(int32_t), 0, kSplitTag, &q));
    rrt_status_t st;
    RRT_TRY(waitRelease(q, &st));
    reply.resize(st.bytes / sizeof(int32_t));
    if (reply.size() < 2 || reply.size() != 2 + static_cast<size_t>(std::max(reply[1], 0)))
      return Status::ErrInternal;
  }
  if (reply[0] < 0) return Status::Ok;  // RRT_UNDEFINED
  Comm* c = new Comm;
  c->ctx = ctx;
  c->rank = reply[0];
  c->size = reply[1];
  c->worldRanks.assign(reply.begin() + 2, reply.end());
  c->errhandler = parent.errhandler;
  addToTable(c);
  *out = c;
  return Status::Ok;
}

Status commDup(Comm& parent, Comm** out) {
  std::vector<int> all(static_cast<size_t>(parent.size));
  for (int r = 0; r < parent.size; ++r) all[static_cast<size_t>(r)] = r;
  uint32_t ctx;
  RRT_TRY(coll::agreeContext(parent, all, kSplitCtxTag, &ctx));
  *out = commCreate(parent, ctx, parent.rank, all);
  return Status::Ok;
}

Comm* commCreate(const Comm& parent, uint32_t ctx, int rank, const std::vector<int>& peers) {
  Comm* c = new Comm;
  c->ctx = ctx;
  c->rank = rank;
  c->size = static_cast<int>(peers.size());
  c->worldRanks.reserve(peers.size());
  for (int p : peers) c->worldRanks.push_back(parent.worldRank(p));
  c->errhandler = parent.errhandler;
  addToTable(c);
  return c;
}

Status commCreateGroup(Comm& parent, const std::vector<int>& ranks, int tag, Comm** out) {
  *out = nullptr;
  auto me = std::find(ranks.begin(), ranks.end(), parent.rank);
  if (me == ranks.end()) return Status::ErrArg;
  uint32_t ctx;
  RRT_TRY(coll::agreeContext(parent, ranks, groupTag(tag), &ctx));
  *out = commCreate(parent, ctx, static_cast<int>(me - ranks.begin()), ranks);
  return Status::Ok;
}

Status commCreateInter(Comm& parent, const std::vector<int>& local, const std::vector<int>& remote,
                       Comm** out) {
  *out = nullptr;
  auto me = std::find(local.begin(), local.end(), parent.rank);
  if (me == local.end() || local.size() + remote.size() != static_cast<size_t>(parent.size))
    return Status::ErrArg;
  std::vector<int> all(static_cast<size_t>(parent.size));
  for (int r = 0; r < parent.size; ++r) all[static_cast<size_t>(r)] = r;
  uint32_t ctx;
  RRT_TRY(coll::agreeContext(parent, all, kInterTag, &ctx));
  *out = commCreate(parent, ctx, static_cast<int>(me - local.begin()), remote);
  (*out)->inter = true;
  return Status::Ok;
}

namespace {
bool contains(const std::vector<uint32_t>& v, uint32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
void eraseOne(std::vector<uint32_t>& v, uint32_t x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it != v.end()) v.erase(it);
}
}  // namespace

uint32_t ctxOffer(uint32_t floor) {
  uint32_t c = std::max(gNextCtx, (floor + 1) & ~1u);
  while (contains(gClaimed, c) || contains(gOffered, c)) c += 2;
  gOffered.push_back(c);
  return c;
}

void ctxWithdraw(uint32_t c) { eraseOne(gOffered, c); }

bool ctxClaim(uint32_t c) {
  if (c < gNextCtx || (c & 1) || contains(gClaimed, c)) return false;
  gClaimed.push_back(c);
  return true;
}

void ctxUnclaim(uint32_t c) { eraseOne(gClaimed, c); }

void ctxCommit(uint32_t c) {
  ctxUnclaim(c);
  gNextCtx = std::max(gNextCtx, c + 2);
}

}  // namespace rrt::proto
