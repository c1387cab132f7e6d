// Communicators and datatypes.
#include <algorithm>
#include <vector>

#include "runtime/api/api_check.h"
#include "runtime/coll/ctx_agree.h"
#include "runtime/core/datatype.h"
#include "runtime/proto/comm.h"
#include "runtime/proto/engine.h"

using namespace rrt;

#define ENTER_COMM(fn, handle)                               \
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));          \
  proto::Comm* c = api::checkComm(fn, handle);               \
  if (!c) RRT_API_FAIL(fn, nullptr, Status::ErrComm)

extern "C" {

int rrt_comm_rank(rrt_comm_t comm, int* rank) {
  ENTER_COMM("rrt_comm_rank", comm);
  if (!rank) RRT_API_FAIL("rrt_comm_rank", c, Status::ErrArg);
  *rank = c->rank;
  return RRT_SUCCESS;
}

int rrt_comm_size(rrt_comm_t comm, int* size) {
  ENTER_COMM("rrt_comm_size", comm);
  if (!size) RRT_API_FAIL("rrt_comm_size", c, Status::ErrArg);
  *size = c->size;
  return RRT_SUCCESS;
}

namespace {
// Intercommunicators carry point-to-point only.
Status checkIntra(const char* fn, const proto::Comm& c) {
  if (!c.inter) return Status::Ok;
  RRT_WARN("%s: not defined on an intercommunicator", fn);
  return Status::ErrComm;
}
// n distinct ranks of c in range, every one also absent from other (when given).
Status checkRankList(const char* fn, const proto::Comm& c, int n, const int* ranks,
                     std::vector<int>* out, const std::vector<int>* other = nullptr) {
  if (n <= 0 || !ranks) {
    RRT_WARN("%s: empty rank list", fn);
    return Status::ErrArg;
  }
  std::vector<char> seen(static_cast<size_t>(c.size), 0);
  if (other)
    for (int r : *other) seen[static_cast<size_t>(r)] = 1;
  out->assign(ranks, ranks + n);
  for (int r : *out) {
    if (r < 0 || r >= c.size) return api::detail::badRank(fn, c, r, "rank in list");
    if (seen[static_cast<size_t>(r)]) {
      RRT_WARN("%s: rank %d listed twice", fn, r);
      return Status::ErrArg;
    }
    seen[static_cast<size_t>(r)] = 1;
  }
  return Status::Ok;
}
}  // namespace

int rrt_comm_create_group(rrt_comm_t comm, int n, const int* ranks, int tag, rrt_comm_t* newcomm) {
  ENTER_COMM("rrt_comm_create_group", comm);
  RRT_API_CHECK("rrt_comm_create_group", c, checkIntra("rrt_comm_create_group", *c));
  if (!newcomm) RRT_API_FAIL("rrt_comm_create_group", c, Status::ErrArg);
  RRT_API_CHECK("rrt_comm_create_group", c, api::checkTag("rrt_comm_create_group", tag, false));
  std::vector<int> list;
  RRT_API_CHECK("rrt_comm_create_group", c,
                checkRankList("rrt_comm_create_group", *c, n, ranks, &list));
  if (std::find(list.begin(), list.end(), c->rank) == list.end()) {
    RRT_WARN("rrt_comm_create_group: the calling rank %d is not in the list", c->rank);
    RRT_API_FAIL("rrt_comm_create_group", c, Status::ErrArg);
  }
  proto::Comm* nc = nullptr;
  RRT_API_CHECK("rrt_comm_create_group", c, proto::commCreateGroup(*c, list, tag, &nc));
  *newcomm = nc->handle;
  return RRT_SUCCESS;
}

int rrt_comm_create_inter(rrt_comm_t comm, int nlocal, const int* local_ranks, int nremote,
                          const int* remote_ranks, rrt_comm_t* newcomm) {
  ENTER_COMM("rrt_comm_create_inter", comm);
  RRT_API_CHECK("rrt_comm_create_inter", c, checkIntra("rrt_comm_create_inter", *c));
  if (!newcomm) RRT_API_FAIL("rrt_comm_create_inter", c, Status::ErrArg);
  std::vector<int> local, remote;
  RRT_API_CHECK("rrt_comm_create_inter", c,
                checkRankList("rrt_comm_create_inter", *c, nlocal, local_ranks, &local));
  RRT_API_CHECK("rrt_comm_create_inter", c,
                checkRankList("rrt_comm_create_inter", *c, nremote, remote_ranks, &remote, &local));
  if (nlocal + nremote != c->size ||
      std::find(local.begin(), local.end(), c->rank) == local.end()) {
    RRT_WARN("rrt_comm_create_inter: the two groups must cover the communicator, the caller "
             "in the local one");
    RRT_API_FAIL("rrt_comm_create_inter", c, Status::ErrArg);
  }
  proto::Comm* nc = nullptr;
  RRT_API_CHECK("rrt_comm_create_inter", c, proto::commCreateInter(*c, local, remote, &nc));
  *newcomm = nc->handle;
  return RRT_SUCCESS;
}

int rrt_comm_dup(rrt_comm_t comm, rrt_comm_t* newcomm) {
  ENTER_COMM("rrt_comm_dup", comm);
  RRT_API_CHECK("rrt_comm_dup", c, checkIntra("rrt_comm_dup", *c));
  if (!newcomm) RRT_API_FAIL("rrt_comm_dup", c, Status::ErrArg);
  proto::Comm* n = nullptr;
  RRT_API_CHECK("rrt_comm_dup", c, proto::commDup(*c, &n));
  *newcomm = n->handle;
  return RRT_SUCCESS;
}

int rrt_comm_idup(rrt_comm_t comm, rrt_comm_t* newcomm, rrt_request_t* request) {
  const char* fn = "rrt_comm_idup";
  ENTER_COMM(fn, comm);
  RRT_API_CHECK(fn, c, checkIntra(fn, *c));
  if (!newcomm || !request) RRT_API_FAIL(fn, c, Status::ErrArg);
  *newcomm = RRT_COMM_NULL;
  core::Request* r = nullptr;
  RRT_API_CHECK(fn, c, coll::startCommIdup(*c, newcomm, &r));
  *request = r;
  return RRT_SUCCESS;
}

int rrt_comm_split(rrt_comm_t comm, int color, int key, rrt_comm_t* newcomm) {
  ENTER_COMM("rrt_comm_split", comm);
  RRT_API_CHECK("rrt_comm_split", c, checkIntra("rrt_comm_split", *c));
  if (!newcomm) RRT_API_FAIL("rrt_comm_split", c, Status::ErrArg);
  if (color < 0 && color != RRT_UNDEFINED) {
    RRT_WARN("rrt_comm_split: color %d is negative (use RRT_UNDEFINED)", color);
    RRT_API_FAIL("rrt_comm_split", c, Status::ErrArg);
  }
  proto::Comm* n = nullptr;
  RRT_API_CHECK("rrt_comm_split", c, proto::commSplit(*c, color, key, &n));
  *newcomm = n ? n->handle : RRT_COMM_NULL;
  return RRT_SUCCESS;
}

int rrt_comm_split_type(rrt_comm_t comm, int type, int key, rrt_comm_t* newcomm) {
  const char* fn = "rrt_comm_split_type";
  ENTER_COMM(fn, comm);
  RRT_API_CHECK(fn, c, checkIntra(fn, *c));
  if (!newcomm) RRT_API_FAIL(fn, c, Status::ErrArg);
  if (type != RRT_COMM_TYPE_SHARED && type != RRT_UNDEFINED) {
    RRT_WARN("%s: unknown type %d (RRT_COMM_TYPE_SHARED or RRT_UNDEFINED)", fn, type);
    RRT_API_FAIL(fn, c, Status::ErrArg);
  }
  // The node id is the color: ranks of one node (per PMIx, never per host name) share memory.
  const auto& nodeOf = proto::engine().job().nodeOf;
  const int me = c->worldRank(c->rank);
  int color = RRT_UNDEFINED;
  if (type == RRT_COMM_TYPE_SHARED)
    color = nodeOf.empty() ? 0 : static_cast<int>(nodeOf[static_cast<size_t>(me)] & 0x3fffffff);
  proto::Comm* n = nullptr;
  RRT_API_CHECK(fn, c, proto::commSplit(*c, color, key, &n));
  *newcomm = n ? n->handle : RRT_COMM_NULL;
  return RRT_SUCCESS;
}

int rrt_comm_free(rrt_comm_t* comm) {
  RRT_API_CHECK("rrt_comm_free", nullptr, api::checkActive("rrt_comm_free"));
  if (!comm) RRT_API_FAIL("rrt_comm_free", nullptr, Status::ErrArg);
  if (*comm == RRT_COMM_WORLD || *comm == RRT_COMM_SELF) {
    RRT_WARN("rrt_comm_free: cannot free a predefined communicator");
    RRT_API_FAIL("rrt_comm_free", nullptr, Status::ErrComm);
  }
  if (!api::checkComm("rrt_comm_free", *comm)) RRT_API_FAIL("rrt_comm_free", nullptr, Status::ErrComm);
  RRT_API_CHECK("rrt_comm_free", nullptr, proto::commFree(*comm));
  *comm = RRT_COMM_NULL;
  return RRT_SUCCESS;
}

int rrt_comm_world_rank(rrt_comm_t comm, int rank, int* world_rank) {
  ENTER_COMM("rrt_comm_world_rank", comm);
  if (!world_rank) RRT_API_FAIL("rrt_comm_world_rank", c, Status::ErrArg);
  if (rank < 0 || rank >= c->size) {
    RRT_WARN("rrt_comm_world_rank: rank %d out of range (size %d)", rank, c->size);
    RRT_API_FAIL("rrt_comm_world_rank", c, Status::ErrRank);
  }
  *world_rank = c->worldRank(rank);
  return RRT_SUCCESS;
}

int rrt_comm_set_errhandler(rrt_comm_t comm, rrt_errhandler_t handler) {
  ENTER_COMM("rrt_comm_set_errhandler", comm);
  if (handler != RRT_ERRORS_RETURN && handler != RRT_ERRORS_ARE_FATAL) {
    RRT_WARN("rrt_comm_set_errhandler: unknown handler %d", handler);
    RRT_API_FAIL("rrt_comm_set_errhandler", c, Status::ErrArg);
  }
  c->errhandler = handler;
  c->errhandlerSet = true;
  return RRT_SUCCESS;
}

int rrt_comm_get_errhandler(rrt_comm_t comm, rrt_errhandler_t* handler) {
  ENTER_COMM("rrt_comm_get_errhandler", comm);
  if (!handler) RRT_API_FAIL("rrt_comm_get_errhandler", c, Status::ErrArg);
  *handler = c->errhandler;
  return RRT_SUCCESS;
}

// ---- datatypes (usable before init: they are local) ----

int rrt_type_contiguous(size_t count, rrt_datatype_t oldtype, rrt_datatype_t* newtype) {
  if (!newtype) RRT_API_FAIL("rrt_type_contiguous", nullptr, Status::ErrArg);
  Status st = core::typeContiguous(count, oldtype, newtype);
  if (st != Status::Ok) RRT_WARN("rrt_type_contiguous: %s", statusName(st));
  return api::finish("rrt_type_contiguous", nullptr, st);
}

int rrt_type_free(rrt_datatype_t* type) {
  Status st = core::typeFree(type);
  if (st != Status::Ok) RRT_WARN("rrt_type_free: not a derived datatype");
  return api::finish("rrt_type_free", nullptr, st);
}

int rrt_type_size(rrt_datatype_t type, size_t* size) {
  const core::TypeInfo* info;
  RRT_API_CHECK("rrt_type_size", nullptr, api::checkType("rrt_type_size", type, &info));
  if (!size) RRT_API_FAIL("rrt_type_size", nullptr, Status::ErrArg);
  *size = info->size;
  return RRT_SUCCESS;
}

int rrt_type_extent(rrt_datatype_t type, size_t* extent) { return rrt_type_size(type, extent); }

int rrt_get_count(const rrt_status_t* status, rrt_datatype_t type, size_t* count) {
  const core::TypeInfo* info;
  RRT_API_CHECK("rrt_get_count", nullptr, api::checkType("rrt_get_count", type, &info));
  if (!status || !count) RRT_API_FAIL("rrt_get_count", nullptr, Status::ErrArg);
  if (info->size == 0) {
    *count = 0;
  } else {
    *count = status->bytes % info->size ? RRT_COUNT_UNDEFINED : status->bytes / info->size;
  }
  return RRT_SUCCESS;
}

}  // extern "C"
