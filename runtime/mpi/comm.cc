// Communicators: MPI handles over rrt communicators, plus what MPI attaches to them (error
// handler, name, attributes, topology, info hints). Creation is always an rrt call (dup, split,
// create_group, create_inter); MPI_Comm_create and MPI_Comm_split_type are expressed as splits.
// An intercommunicator is two rrt communicators: rrt's intercommunicator for point-to-point
// and an intracommunicator over both groups (union) for merge and dup.
#include <algorithm>
#include <cstring>
#include <memory>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
// At namespace scope, not a function-local static: no initialization guard on every lookup.
Table<Comm> gComms;
namespace {
Table<Comm>& comms() { return gComms; }
}  // namespace

Comm* commCheck(MPI_Comm handle, const char* fn, int* err) {
  Comm* c = commGet(handle);
  if (c == nullptr) *err = raise(MPI_COMM_WORLD, active() ? MPI_ERR_COMM : MPI_ERR_OTHER, fn);
  return c;
}

int commWrap(rrt_comm_t rc, const Comm& parent, MPI_Comm* out) {
  if (rc == RRT_COMM_NULL) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  Comm c;
  c.rc = rc;
  rrt_comm_rank(rc, &c.rank);
  rrt_comm_size(rc, &c.size);
  c.errh = parent.errh;  // MPI 3.1 section 8.3: new communicators inherit the handler
  errhandlerRetain(c.errh);
  *out = kKindComm | comms().add(std::move(c));
  return MPI_SUCCESS;
}

const std::vector<int>& commWorldRanks(Comm& c) {
  if (c.worldRanks.empty()) {
    c.worldRanks.resize(static_cast<size_t>(c.size));
    for (int r = 0; r < c.size; ++r) rrt_comm_world_rank(c.rc, r, &c.worldRanks[r]);
  }
  return c.worldRanks;
}

namespace {

// A new intercommunicator over union (an rrt intracommunicator of both groups, local group
// first when localFirst), local and remote given as world ranks.
int interWrap(rrt_comm_t unionRc, bool localFirst, std::vector<int> local,
              std::vector<int> remote, const Comm& parent, MPI_Comm errComm, MPI_Comm* out,
              const char* fn) {
  const int nl = static_cast<int>(local.size()), nr = static_cast<int>(remote.size());
  std::vector<int> lr(static_cast<size_t>(nl)), rr(static_cast<size_t>(nr));
  for (int i = 0; i < nl; ++i) lr[i] = localFirst ? i : nr + i;
  for (int i = 0; i < nr; ++i) rr[i] = localFirst ? nl + i : i;
  rrt_comm_t rc;
  if (int e = check(errComm, rrt_comm_create_inter(unionRc, nl, lr.data(), nr, rr.data(), &rc), fn)) {
    rrt_comm_free(&unionRc);
    return e;
  }
  Comm c;
  c.rc = rc;
  c.inter = true;
  c.localFirst = localFirst;
  c.unionRc = unionRc;
  rrt_comm_rank(rc, &c.rank);
  c.size = nl;
  c.worldRanks = std::move(local);
  c.remoteWorldRanks = std::move(remote);
  c.errh = parent.errh;
  errhandlerRetain(c.errh);
  *out = kKindComm | comms().add(std::move(c));
  return MPI_SUCCESS;
}

int interDup(MPI_Comm comm, const Comm& c, MPI_Comm* out) {
  rrt_comm_t u;
  if (int e = check(comm, rrt_comm_dup(c.unionRc, &u), "MPI_Comm_dup")) return e;
  return interWrap(u, c.localFirst, c.worldRanks, c.remoteWorldRanks, c, comm, out, "MPI_Comm_dup");
}

// MPI_Comm_split on an intercommunicator (MPI_Comm_create too, as a split): the new local group
// is the local processes of my color, the remote group the remote processes of that color, each
// ordered by key, then old rank; a color without members on both sides gives MPI_COMM_NULL.
int interSplit(MPI_Comm comm, int color, int key, MPI_Comm* out, const char* fn) {
  Comm* c = commGet(comm);
  int n = 0, me = 0;
  rrt_comm_size(c->unionRc, &n);
  rrt_comm_rank(c->unionRc, &me);
  std::vector<int> all(2 * static_cast<size_t>(n));
  int mine[2] = {color, key};
  if (int e = check(comm, rrt_allgather(mine, 2, RRT_INT32, all.data(), 2, RRT_INT32, c->unionRc), fn))
    return e;
  // union ranks of each group of the old intercommunicator, in old rank order
  const int nFirst = c->localFirst ? c->size : n - c->size;
  auto members = [&](bool firstGroup) {
    std::vector<int> m;
    for (int u = firstGroup ? 0 : nFirst; u < (firstGroup ? nFirst : n); ++u)
      if (color != MPI_UNDEFINED && all[2 * u] == color) m.push_back(u);
    std::stable_sort(m.begin(), m.end(), [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
    return m;
  };
  std::vector<int> first = members(true), second = members(false);
  const bool both = !first.empty() && !second.empty();
  // the new union: first group's members then the second's; my key is my place in it
  int newColor = both ? color : MPI_UNDEFINED, newKey = 0;
  std::vector<int> order = first;
  order.insert(order.end(), second.begin(), second.end());
  if (both) newKey = static_cast<int>(std::find(order.begin(), order.end(), me) - order.begin());
  rrt_comm_t u;
  if (int e = check(comm, rrt_comm_split(c->unionRc, newColor == MPI_UNDEFINED ? RRT_UNDEFINED : newColor,
                                         newKey, &u),
                    fn))
    return e;
  if (!both) {
    *out = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  std::vector<int> wl, wr;  // world ranks of the new local and remote groups
  const std::vector<int>& oldLocal = c->worldRanks;
  const std::vector<int>& oldRemote = c->remoteWorldRanks;
  auto world = [&](int u2) {
    const bool inFirst = u2 < nFirst;
    const int idx = inFirst ? u2 : u2 - nFirst;
    const bool isLocal = inFirst == c->localFirst;
    return isLocal ? oldLocal[static_cast<size_t>(idx)] : oldRemote[static_cast<size_t>(idx)];
  };
  const std::vector<int>& myGroup = c->localFirst ? first : second;
  const std::vector<int>& otherGroup = c->localFirst ? second : first;
  for (int x : myGroup) wl.push_back(world(x));
  for (int x : otherGroup) wr.push_back(world(x));
  return interWrap(u, c->localFirst, std::move(wl), std::move(wr), *c, comm, out, fn);
}

}  // namespace

// Called by MPI_Init: MPI_COMM_WORLD and MPI_COMM_SELF are slots 0 and 1.
void commsInit() {
  for (rrt_comm_t rc : {RRT_COMM_WORLD, RRT_COMM_SELF}) {
    Comm c;
    c.rc = rc;
    rrt_comm_rank(rc, &c.rank);
    rrt_comm_size(rc, &c.size);
    c.name = rc == RRT_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF";
    rrt_comm_set_errhandler(rc, RRT_ERRORS_RETURN);  // the layer applies MPI's handler
    comms().add(std::move(c));
  }
}

// Called by MPI_Finalize: runs the delete callbacks of attributes on MPI_COMM_SELF first,
// as MPI 3.1 section 8.7.1 requires, then on MPI_COMM_WORLD.
void commsFinalize() {
  if (Comm* s = commGet(MPI_COMM_SELF)) attrDeleteAll(MPI_COMM_SELF, *s);
  if (Comm* w = commGet(MPI_COMM_WORLD)) attrDeleteAll(MPI_COMM_WORLD, *w);
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Comm_rank);
int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  *rank = c->rank;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_size);
int PMPI_Comm_size(MPI_Comm comm, int* size) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  *size = c->size;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_dup);
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (c->inter) {
    if (int e = interDup(comm, *c, newcomm)) return e;
  } else {
    rrt_comm_t rc;
    if (int e = check(comm, rrt_comm_dup(c->rc, &rc), __func__)) return e;
    commWrap(rc, *c, newcomm);
  }
  Comm* n = commGet(*newcomm);
  c = commGet(comm);  // the table may not move entries, but be plain about it
  n->topo = c->topo;  // MPI_Comm_dup keeps the topology and the info hints
  n->hints = c->hints;
  if (int e = attrCopyAll(comm, *c, *n)) {
    // a failed copy callback fails the dup: the new communicator goes away (MPI 3.1 6.7.2)
    MPI_Comm fresh = *newcomm;
    attrDeleteAll(fresh, *n);
    rrt_comm_t rc = n->rc, urc = n->unionRc;
    rrt_comm_free(&rc);
    if (urc != RRT_COMM_NULL) rrt_comm_free(&urc);
    errhandlerRelease(n->errh);
    comms().remove(handleIndex(fresh, kKindComm));
    *newcomm = MPI_COMM_NULL;
    return raise(comm, e, __func__);
  }
  return MPI_SUCCESS;
}

// The duplicate is made by rrt_comm_idup (of the union communicator for an intercommunicator);
// what MPI_Comm_dup does after that (the MPI handle, topology, hints, attribute copies; the
// intercommunicator's own creation over the union) runs when the request completes, in the
// MPI_Wait / MPI_Test that sees it. The parent's state is taken now: it may be freed meanwhile.
namespace {
int idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request, const MPI_Info* info,
         const char* fn) {
  int err;
  Comm* c = commCheck(comm, fn, &err);
  if (!c) return err;
  if (!newcomm || !request) return raise(comm, MPI_ERR_ARG, fn);
  auto rc = std::make_shared<rrt_comm_t>(RRT_COMM_NULL);
  rrt_request_t rr;
  if (int e = check(comm, rrt_comm_idup(c->inter ? c->unionRc : c->rc, rc.get(), &rr), fn))
    return e;
  *newcomm = MPI_COMM_NULL;
  Stage st;
  auto hints = info ? (*info == MPI_INFO_NULL ? decltype(Comm::hints){} : *infoGet(*info)) : c->hints;
  st.onFinish([rc, newcomm, comm, parent = *c, hints](size_t) mutable {
    if (*rc == RRT_COMM_NULL) return;  // the agreement failed: the request carries the error
    if (parent.inter) {
      interWrap(*rc, parent.localFirst, parent.worldRanks, parent.remoteWorldRanks, parent, comm,
                newcomm, "MPI_Comm_idup");
    } else {
      commWrap(*rc, parent, newcomm);
    }
    Comm* n = commGet(*newcomm);
    if (!n) return;
    n->topo = parent.topo;
    n->hints = hints;
    // A failing attribute copy callback cannot fail a completed request: the attribute is left out.
    (void)attrCopyAll(comm, parent, *n);
  });
  *request = requestMake(rr, comm, std::move(st), false);
  return MPI_SUCCESS;
}
}  // namespace

RRT_MPI_WEAK_ALIAS(MPI_Comm_idup);
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return idup(comm, newcomm, request, nullptr, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_idup_with_info);
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                             MPI_Request* request) {
  if (info != MPI_INFO_NULL && infoGet(info) == nullptr) return raise(comm, MPI_ERR_INFO, __func__);
  return idup(comm, newcomm, request, &info, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_dup_with_info);
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  if (info != MPI_INFO_NULL && infoGet(info) == nullptr) return raise(comm, MPI_ERR_INFO, __func__);
  if (int e = PMPI_Comm_dup(comm, newcomm)) return e;
  commGet(*newcomm)->hints = info == MPI_INFO_NULL ? decltype(Comm::hints){} : *infoGet(info);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_split);
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (color < 0 && color != MPI_UNDEFINED) return raise(comm, MPI_ERR_ARG, __func__);
  if (c->inter) return interSplit(comm, color, key, newcomm, __func__);
  rrt_comm_t rc;
  if (int e = check(comm, rrt_comm_split(c->rc, color, key, &rc), __func__)) return e;
  return commWrap(rc, *commGet(comm), newcomm);
}

// Processes on one node (per the launcher's PMIx node map) share memory.
RRT_MPI_WEAK_ALIAS(MPI_Comm_split_type);
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (!newcomm) return raise(comm, MPI_ERR_ARG, __func__);
  if (c->inter) return raise(comm, MPI_ERR_COMM, __func__);
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
    return raise(comm, MPI_ERR_ARG, __func__);
  rrt_comm_t rc;
  const int type = split_type == MPI_COMM_TYPE_SHARED ? RRT_COMM_TYPE_SHARED : RRT_UNDEFINED;
  if (int e = check(comm, rrt_comm_split_type(c->rc, type, key, &rc), __func__)) return e;
  return commWrap(rc, *commGet(comm), newcomm);
}

// Members of group get a communicator in group order. Disjoint groups on different processes
// (allowed since MPI 2.2) get distinct colors: the lowest world rank of each group.
RRT_MPI_WEAK_ALIAS(MPI_Comm_create);
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  const std::vector<int>* g = groupGet(group);
  if (g == nullptr) return raise(comm, MPI_ERR_GROUP, __func__);
  const std::vector<int>& mine = commWorldRanks(*c);
  if (c->inter) {  // group is a subgroup of the local group; each side gives its own
    int me = mine[static_cast<size_t>(c->rank)], key = -1;
    for (size_t i = 0; i < g->size(); ++i) {
      if (std::find(mine.begin(), mine.end(), (*g)[i]) == mine.end())
        return raise(comm, MPI_ERR_GROUP, __func__);
      if ((*g)[i] == me) key = static_cast<int>(i);
    }
    return interSplit(comm, key < 0 ? MPI_UNDEFINED : 0, key, newcomm, __func__);
  }
  for (int w : *g)
    if (std::find(mine.begin(), mine.end(), w) == mine.end())
      return raise(comm, MPI_ERR_GROUP, __func__);
  int me = mine[static_cast<size_t>(c->rank)];
  int color = MPI_UNDEFINED, key = 0;
  for (size_t i = 0; i < g->size(); ++i)
    if ((*g)[i] == me) {
      color = *std::min_element(g->begin(), g->end());
      key = static_cast<int>(i);
    }
  rrt_comm_t rc;
  if (int e = check(comm, rrt_comm_split(c->rc, color, key, &rc), __func__)) return e;
  return commWrap(rc, *commGet(comm), newcomm);
}

// Collective over the members of group only; tag keeps concurrent calls apart. Processes
// outside group get MPI_COMM_NULL (as MPI_Comm_create gives them).
RRT_MPI_WEAK_ALIAS(MPI_Comm_create_group);
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (c->inter) return raise(comm, MPI_ERR_COMM, __func__);
  const std::vector<int>* g = groupGet(group);
  if (g == nullptr) return raise(comm, MPI_ERR_GROUP, __func__);
  if (tag < 0) return raise(comm, MPI_ERR_TAG, __func__);
  const std::vector<int>& mine = commWorldRanks(*c);
  std::vector<int> ranks;  // group members as ranks of comm
  for (int w : *g) {
    auto it = std::find(mine.begin(), mine.end(), w);
    if (it == mine.end()) return raise(comm, MPI_ERR_GROUP, __func__);
    ranks.push_back(static_cast<int>(it - mine.begin()));
  }
  if (std::find(ranks.begin(), ranks.end(), c->rank) == ranks.end()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  rrt_comm_t rc;
  if (int e = check(comm, rrt_comm_create_group(c->rc, static_cast<int>(ranks.size()), ranks.data(),
                                                tag, &rc),
                    __func__))
    return e;
  return commWrap(rc, *commGet(comm), newcomm);
}

// The leaders exchange their groups (world ranks) over peer_comm with tag, each broadcasts the
// other group in its local_comm; then both groups form the union over MPI_COMM_WORLD (every
// rrt process is in it) with the group of the lower first world rank first.
RRT_MPI_WEAK_ALIAS(MPI_Intercomm_create);
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm* newintercomm) {
  int err;
  Comm* c = commCheck(local_comm, __func__, &err);
  if (!c) return err;
  if (c->inter) return raise(local_comm, MPI_ERR_COMM, __func__);
  if (local_leader < 0 || local_leader >= c->size) return raise(local_comm, MPI_ERR_RANK, __func__);
  if (tag < 0) return raise(local_comm, MPI_ERR_TAG, __func__);
  if (newintercomm == nullptr) return raise(local_comm, MPI_ERR_ARG, __func__);
  std::vector<int> local = commWorldRanks(*c), remote;
  int nRemote = 0;
  if (c->rank == local_leader) {
    Comm* p = commCheck(peer_comm, __func__, &err);
    if (!p) return err;
    if (p->inter) return raise(local_comm, MPI_ERR_COMM, __func__);
    int nLocal = c->size;
    if (int e = check(local_comm, rrt_sendrecv(&nLocal, 1, RRT_INT32, remote_leader, tag, &nRemote, 1,
                                               RRT_INT32, remote_leader, tag, p->rc, nullptr),
                      __func__))
      return e;
    if (nRemote <= 0) return raise(local_comm, MPI_ERR_INTERN, __func__);
    remote.resize(static_cast<size_t>(nRemote));
    if (int e = check(local_comm,
                      rrt_sendrecv(local.data(), local.size(), RRT_INT32, remote_leader, tag,
                                   remote.data(), remote.size(), RRT_INT32, remote_leader, tag,
                                   p->rc, nullptr),
                      __func__))
      return e;
  }
  if (int e = check(local_comm, rrt_bcast(&nRemote, 1, RRT_INT32, local_leader, c->rc), __func__))
    return e;
  remote.resize(static_cast<size_t>(nRemote));
  if (int e = check(local_comm, rrt_bcast(remote.data(), remote.size(), RRT_INT32, local_leader, c->rc),
                    __func__))
    return e;
  for (int w : remote)
    if (std::find(local.begin(), local.end(), w) != local.end())
      return raise(local_comm, MPI_ERR_ARG, __func__);  // the groups must be disjoint
  const bool localFirst = local[0] < remote[0];
  std::vector<int> all = localFirst ? local : remote;
  const std::vector<int>& second = localFirst ? remote : local;
  all.insert(all.end(), second.begin(), second.end());
  rrt_comm_t u;
  if (int e = check(local_comm, rrt_comm_create_group(RRT_COMM_WORLD, static_cast<int>(all.size()),
                                                      all.data(), tag, &u),
                    __func__))
    return e;
  return interWrap(u, localFirst, std::move(local), std::move(remote), *commGet(local_comm),
                   local_comm, newintercomm, __func__);
}

// The group with high = false comes first; with equal values, the union's order.
RRT_MPI_WEAK_ALIAS(MPI_Intercomm_merge);
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  int err;
  Comm* c = commCheck(intercomm, __func__, &err);
  if (!c) return err;
  if (!c->inter) return raise(intercomm, MPI_ERR_COMM, __func__);
  int n = 0, me = 0;
  rrt_comm_size(c->unionRc, &n);
  rrt_comm_rank(c->unionRc, &me);
  std::vector<int> highs(static_cast<size_t>(n));
  int mine = high ? 1 : 0;
  if (int e = check(intercomm, rrt_allgather(&mine, 1, RRT_INT32, highs.data(), 1, RRT_INT32, c->unionRc),
                    __func__))
    return e;
  // the first rank of the other group in the union
  const int other = c->localFirst ? c->size : 0;
  const int key = (mine > highs[static_cast<size_t>(other)] ? n : 0) + me;
  rrt_comm_t rc;
  if (int e = check(intercomm, rrt_comm_split(c->unionRc, 0, key, &rc), __func__)) return e;
  return commWrap(rc, *commGet(intercomm), newintracomm);
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_remote_size);
int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (!c->inter) return raise(comm, MPI_ERR_COMM, __func__);
  *size = static_cast<int>(c->remoteWorldRanks.size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_remote_group);
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (!c->inter) return raise(comm, MPI_ERR_COMM, __func__);
  return groupMake(c->remoteWorldRanks, group);
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_free);
int PMPI_Comm_free(MPI_Comm* comm) {
  int err;
  Comm* c = commCheck(comm ? *comm : MPI_COMM_NULL, __func__, &err);
  if (!c) return err;
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) return raise(*comm, MPI_ERR_COMM, __func__);
  if (int e = attrDeleteAll(*comm, *c)) return raise(*comm, e, __func__);
  rrt_comm_t rc = c->rc, urc = c->unionRc;
  if (int e = check(*comm, rrt_comm_free(&rc), __func__)) return e;
  if (urc != RRT_COMM_NULL)
    if (int e = check(*comm, rrt_comm_free(&urc), __func__)) return e;
  errhandlerRelease(c->errh);
  comms().remove(handleIndex(*comm, kKindComm));
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_compare);
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  int err;
  Comm* a = commCheck(comm1, __func__, &err);
  if (!a) return err;
  Comm* b = commCheck(comm2, __func__, &err);
  if (!b) return err;
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  std::vector<int> ga = commWorldRanks(*a), gb = commWorldRanks(*b);
  if (a->inter || b->inter) {  // both groups must match (MPI 3.1 section 6.6.2)
    if (a->inter != b->inter || a->remoteWorldRanks != b->remoteWorldRanks) ga.clear();
  }
  if (ga == gb) {
    *result = MPI_CONGRUENT;
    return MPI_SUCCESS;
  }
  std::sort(ga.begin(), ga.end());
  std::sort(gb.begin(), gb.end());
  *result = ga == gb ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_test_inter);
int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  *flag = c->inter ? 1 : 0;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_set_name);
int PMPI_Comm_set_name(MPI_Comm comm, const char* name) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (name == nullptr) return raise(comm, MPI_ERR_ARG, __func__);
  c->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_get_name);
int PMPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  std::memcpy(name, c->name.c_str(), c->name.size() + 1);
  *resultlen = static_cast<int>(c->name.size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_set_info);
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  auto* kv = infoGet(info);
  if (kv == nullptr) return raise(comm, MPI_ERR_INFO, __func__);
  for (auto& [k, v] : *kv) c->hints[k] = v;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Comm_get_info);
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  return infoMake(c->hints, info_used);
}

}  // extern "C"
