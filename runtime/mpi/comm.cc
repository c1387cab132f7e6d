// Communicators: MPI handles over rrt communicators, plus what MPI attaches to them (error
// handler, name, attributes, topology, info hints). Creation is always an rrt call (dup, split);
// MPI_Comm_create and MPI_Comm_split_type are expressed as splits.
#include <algorithm>
#include <cstring>

#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {
Table<Comm>& comms() {
  static Table<Comm> t;
  return t;
}
}  // namespace

Comm* commGet(MPI_Comm handle) { return comms().get(handleIndex(handle, kKindComm)); }

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

int MPI_Comm_rank(MPI_Comm comm, int* rank) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  *rank = c->rank;
  return MPI_SUCCESS;
}

int MPI_Comm_size(MPI_Comm comm, int* size) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  *size = c->size;
  return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  rrt_comm_t rc;
  if (int e = check(comm, rrt_comm_dup(c->rc, &rc), __func__)) return e;
  commWrap(rc, *c, newcomm);
  Comm* n = commGet(*newcomm);
  c = commGet(comm);  // the table may not move entries, but be plain about it
  n->topo = c->topo;  // MPI_Comm_dup keeps the topology and the info hints
  n->hints = c->hints;
  if (int e = attrCopyAll(comm, *c, *n)) return raise(comm, e, __func__);
  return MPI_SUCCESS;
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  if (info != MPI_INFO_NULL && infoGet(info) == nullptr) return raise(comm, MPI_ERR_INFO, __func__);
  if (int e = MPI_Comm_dup(comm, newcomm)) return e;
  commGet(*newcomm)->hints = info == MPI_INFO_NULL ? decltype(Comm::hints){} : *infoGet(info);
  return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (color < 0 && color != MPI_UNDEFINED) return raise(comm, MPI_ERR_ARG, __func__);
  rrt_comm_t rc;
  if (int e = check(comm, rrt_comm_split(c->rc, color, key, &rc), __func__)) return e;
  return commWrap(rc, *commGet(comm), newcomm);
}

// Processes on one host share memory: the color is the lowest rank with the same host name.
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
    return raise(comm, MPI_ERR_ARG, __func__);
  constexpr size_t kLen = MPI_MAX_PROCESSOR_NAME;
  std::vector<char> names(kLen * static_cast<size_t>(c->size), 0);
  char mine[kLen] = {0};
  rrt_get_processor_name(mine, kLen);
  if (int e = check(comm, rrt_allgather(mine, kLen, RRT_BYTE, names.data(), kLen, RRT_BYTE, c->rc),
                    __func__))
    return e;
  int color = MPI_UNDEFINED;
  if (split_type == MPI_COMM_TYPE_SHARED) {
    for (int r = 0; r < c->size; ++r)
      if (std::strncmp(&names[kLen * r], mine, kLen) == 0) {
        color = r;
        break;
      }
  }
  return MPI_Comm_split(comm, color, key, newcomm);
}

// Members of group get a communicator in group order. Disjoint groups on different processes
// (allowed since MPI 2.2) get distinct colors: the lowest world rank of each group.
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  const std::vector<int>* g = groupGet(group);
  if (g == nullptr) return raise(comm, MPI_ERR_GROUP, __func__);
  const std::vector<int>& mine = commWorldRanks(*c);
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

int MPI_Comm_free(MPI_Comm* comm) {
  int err;
  Comm* c = commCheck(comm ? *comm : MPI_COMM_NULL, __func__, &err);
  if (!c) return err;
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) return raise(*comm, MPI_ERR_COMM, __func__);
  if (int e = attrDeleteAll(*comm, *c)) return raise(*comm, e, __func__);
  rrt_comm_t rc = c->rc;
  if (int e = check(*comm, rrt_comm_free(&rc), __func__)) return e;
  errhandlerRelease(c->errh);
  comms().remove(handleIndex(*comm, kKindComm));
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
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
  if (ga == gb) {
    *result = MPI_CONGRUENT;
    return MPI_SUCCESS;
  }
  std::sort(ga.begin(), ga.end());
  std::sort(gb.begin(), gb.end());
  *result = ga == gb ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  int err;
  if (!commCheck(comm, __func__, &err)) return err;
  *flag = 0;  // rrt has intracommunicators only
  return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char* name) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (name == nullptr) return raise(comm, MPI_ERR_ARG, __func__);
  c->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  std::memcpy(name, c->name.c_str(), c->name.size() + 1);
  *resultlen = static_cast<int>(c->name.size());
  return MPI_SUCCESS;
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  auto* kv = infoGet(info);
  if (kv == nullptr) return raise(comm, MPI_ERR_INFO, __func__);
  for (auto& [k, v] : *kv) c->hints[k] = v;
  return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  return infoMake(c->hints, info_used);
}

}  // extern "C"
