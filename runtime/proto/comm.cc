// The communicator table and communicator creation. Creation is collective over the parent:
// its rank 0 gathers every member's (color, key, next free context id), forms the groups
// (ordered by key, then parent rank), picks the context id (the largest next-free id of all
// members, so it is unused in each of them) and sends each member its group. The exchange runs
// on the parent's collective context with a negative tag, which no user receive and no
// collective can match. Creation over a subset of the parent (create_group) and of
// intercommunicators agrees on the context id the same way among the members only.
#include "runtime/proto/comm.h"

#include <algorithm>
#include <vector>

#include "runtime/core/log.h"
#include "runtime/proto/matching.h"
#include "runtime/proto/p2p.h"

namespace rrt::proto {
namespace {

constexpr int kSplitTag = -2;
constexpr int kInterTag = -3;
// create_group: negative tags below the fixed ones, one per user tag.
int groupTag(int tag) { return -16 - (tag & 0x3fffffff); }

std::vector<Comm*>& table() { return detail::gCommTable; }
uint32_t gNextCtx = 4;  // world uses 0/1, self 2/3
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
  const uint32_t cctx = parent.collCtx();
  struct Entry {
    int32_t color, key;
    uint32_t nextCtx;
  };
  Entry mine{color, key, gNextCtx};
  std::vector<int32_t> reply;  // [ctx, newRank, n, world ranks...]

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
    uint32_t ctx = 0;
    for (const Entry& e : all) ctx = std::max(ctx, e.nextCtx);
    std::vector<std::vector<int32_t>> replies(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) {
      std::vector<int32_t>& rep = replies[static_cast<size_t>(r)];
      const Entry& me = all[static_cast<size_t>(r)];
      if (me.color == RRT_UNDEFINED) {
        rep = {static_cast<int32_t>(ctx), -1, 0};
        continue;
      }
      std::vector<int> members;
      for (int m = 0; m < n; ++m)
        if (all[static_cast<size_t>(m)].color == me.color) members.push_back(m);
      std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
        return all[static_cast<size_t>(a)].key < all[static_cast<size_t>(b)].key;
      });
      int newRank = static_cast<int>(std::find(members.begin(), members.end(), r) - members.begin());
      rep = {static_cast<int32_t>(ctx), newRank, static_cast<int32_t>(members.size())};
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
    reply.resize(3 + static_cast<size_t>(parent.size));
    RRT_TRY(irecv(parent, cctx, reply.data(), reply.size() * sizeof(int32_t), 0, kSplitTag, &q));
    rrt_status_t st;
    RRT_TRY(waitRelease(q, &st));
    reply.resize(st.bytes / sizeof(int32_t));
    if (reply.size() < 3 || reply.size() != 3 + static_cast<size_t>(reply[2]))
      return Status::ErrInternal;
  }

  const uint32_t ctx = static_cast<uint32_t>(reply[0]);
  if (!Matcher::validContext(ctx + 1)) {  // every member sees the same ctx, so all fail alike
    RRT_ERROR("out of communicator context ids (%u created)", ctx / 2);
    return Status::ErrComm;
  }
  gNextCtx = ctx + 2;
  if (reply[1] < 0) return Status::Ok;  // RRT_UNDEFINED
  Comm* c = new Comm;
  c->ctx = ctx;
  c->rank = reply[1];
  c->size = reply[2];
  c->worldRanks.assign(reply.begin() + 3, reply.end());
  c->errhandler = parent.errhandler;
  addToTable(c);
  *out = c;
  return Status::Ok;
}

Status commDup(Comm& parent, Comm** out) { return commSplit(parent, 0, parent.rank, out); }

namespace {

// The context id for a communicator of members (parent ranks, the caller among them): members[0]
// gathers every member's next free id and sends back the largest.
Status agreeCtx(Comm& parent, const std::vector<int>& members, int tag, uint32_t* ctx) {
  const uint32_t cctx = parent.collCtx();
  uint32_t mine = gNextCtx;
  core::Request* q;
  if (members[0] == parent.rank) {
    const size_t n = members.size();
    std::vector<uint32_t> all(n, mine);
    std::vector<core::Request*> reqs;
    Status bad = Status::Ok;
    for (size_t i = 1; i < n && bad == Status::Ok; ++i) {
      bad = irecv(parent, cctx, &all[i], sizeof(uint32_t), members[i], tag, &q);
      if (bad == Status::Ok) reqs.push_back(q);
    }
    for (core::Request* r : reqs) {
      Status s = waitRelease(r, nullptr);
      if (s != Status::Ok) bad = s;
    }
    RRT_TRY(bad);
    mine = *std::max_element(all.begin(), all.end());
    reqs.clear();
    for (size_t i = 1; i < n && bad == Status::Ok; ++i) {
      bad = isend(parent, cctx, &mine, sizeof mine, members[i], tag, 0, &q);
      if (bad == Status::Ok) reqs.push_back(q);
    }
    for (core::Request* r : reqs) {
      Status s = waitRelease(r, nullptr);
      if (s != Status::Ok) bad = s;
    }
    RRT_TRY(bad);
  } else {
    RRT_TRY(isend(parent, cctx, &mine, sizeof mine, members[0], tag, 0, &q));
    RRT_TRY(waitRelease(q, nullptr));
    RRT_TRY(irecv(parent, cctx, &mine, sizeof mine, members[0], tag, &q));
    rrt_status_t st;
    RRT_TRY(waitRelease(q, &st));
    if (st.bytes != sizeof mine) return Status::ErrInternal;
  }
  *ctx = mine;
  gNextCtx = mine + 2;
  return Status::Ok;
}

Comm* makeComm(const Comm& parent, uint32_t ctx, int rank, const std::vector<int>& peers) {
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

}  // namespace

Status commCreateGroup(Comm& parent, const std::vector<int>& ranks, int tag, Comm** out) {
  *out = nullptr;
  auto me = std::find(ranks.begin(), ranks.end(), parent.rank);
  if (me == ranks.end()) return Status::ErrArg;
  uint32_t ctx;
  RRT_TRY(agreeCtx(parent, ranks, groupTag(tag), &ctx));
  *out = makeComm(parent, ctx, static_cast<int>(me - ranks.begin()), ranks);
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
  RRT_TRY(agreeCtx(parent, all, kInterTag, &ctx));
  *out = makeComm(parent, ctx, static_cast<int>(me - local.begin()), remote);
  (*out)->inter = true;
  return Status::Ok;
}

}  // namespace rrt::proto
