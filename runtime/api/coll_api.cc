// Collective entry points (blocking and non-blocking) and user reduction ops: argument checks,
// conversion of counts and displacements to bytes, then one call into runtime/coll.
// A blocking collective is the non-blocking one plus a wait (coll::run).
#include <cstdint>
#include <vector>

#include "runtime/api/api_check.h"
#include "runtime/coll/coll.h"
#include "runtime/coll/neighbor_exchange.h"
#include "runtime/coll/op.h"
#include "runtime/coll/vector_pool.h"
#include "runtime/gpu/gpu.h"

using namespace rrt;
using coll::CollArgs;
using coll::CollKind;

namespace {

Status bad(const char* fn, const char* what, Status s);

// Checks shared by every collective; binds the protocol layer on first use.
Status checkCommon(const char* fn, rrt_comm_t comm, proto::Comm** c) {
  RRT_TRY(api::checkActive(fn));
  *c = api::checkComm(fn, comm);
  if (!*c) return Status::ErrComm;
  if ((*c)->inter) return bad(fn, "not defined on an intercommunicator", Status::ErrComm);
  coll::bindProtoP2p();
  return Status::Ok;
}

Status bad(const char* fn, const char* what, Status s) {
  RRT_WARN("%s: %s", fn, what);
  return s;
}

// Bytes of count elements of type (checked), with the type's info.
Status typedBytes(const char* fn, rrt_datatype_t type, size_t count, size_t* bytes,
                  const core::TypeInfo** info = nullptr) {
  const core::TypeInfo* t;
  RRT_TRY(api::checkType(fn, type, &t));
  if (info) *info = t;
  return api::checkCountBytes(fn, count, t->size, bytes);
}

// Per-rank counts and displacements (elements of type) to bytes.
Status vectorBytes(const char* fn, const proto::Comm& c, rrt_datatype_t type, const size_t* counts,
                   const size_t* displs, std::vector<size_t>* bytes, std::vector<size_t>* offs,
                   size_t* extent) {
  if (!counts || !displs) return bad(fn, "counts / displacements must not be NULL", Status::ErrArg);
  const core::TypeInfo* t;
  RRT_TRY(api::checkType(fn, type, &t));
  *extent = 0;
  *bytes = coll::sizesPool().take(static_cast<size_t>(c.size));
  *offs = coll::sizesPool().take(static_cast<size_t>(c.size));
  for (int i = 0; i < c.size; ++i) {
    size_t b = 0, o = 0;
    RRT_TRY(api::checkCountBytes(fn, counts[i], t->size, &b));
    RRT_TRY(api::checkCountBytes(fn, displs[i], t->size, &o));
    bytes->push_back(b);
    offs->push_back(o);
    if (o + b > *extent) *extent = o + b;
  }
  return Status::Ok;
}

// Posts (request != nullptr) or runs the collective, and converts the outcome.
int launch(const char* fn, proto::Comm* c, Status checked, CollArgs&& a, rrt_request_t* request,
           bool nonBlocking) {
  if (checked == Status::Ok && nonBlocking && !request)
    checked = bad(fn, "request must not be NULL", Status::ErrArg);
  if (checked != Status::Ok) return api::finish(fn, c, checked);
  if (nonBlocking) {
    core::Request* r = nullptr;
    RRT_API_CHECK(fn, c, coll::start(*c, std::move(a), &r));
    *request = r;
    return RRT_SUCCESS;
  }
  return api::finish(fn, c, coll::run(*c, std::move(a)));
}

// ---- per-collective argument checks --------------------------------------------------------

Status checkBcast(const char* fn, proto::Comm& c, void* buf, size_t count, rrt_datatype_t type,
                  int root, CollArgs* a) {
  size_t bytes;
  const core::TypeInfo* t;
  RRT_TRY(typedBytes(fn, type, count, &bytes, &t));
  RRT_TRY(api::checkRoot(fn, c, root));
  RRT_TRY(api::checkBuffer(fn, buf, bytes, "buffer"));
  a->kind = CollKind::Bcast;
  a->rbuf = buf;
  a->count = count;
  a->typeSize = t->size;
  a->root = root;
  return Status::Ok;
}

// Reductions: kind is Reduce (root significant), Allreduce, Scan or Exscan.
Status checkReduction(const char* fn, proto::Comm& c, CollKind kind, const void* sbuf, void* rbuf,
                      size_t count, rrt_datatype_t type, rrt_op_t op, int root, CollArgs* a) {
  size_t bytes;
  const core::TypeInfo* t;
  RRT_TRY(typedBytes(fn, type, count, &bytes, &t));
  if (kind == CollKind::Reduce) RRT_TRY(api::checkRoot(fn, c, root));
  Status s = coll::makeReducer(op, type, &a->reducer);
  if (s != Status::Ok) return bad(fn, "op is not defined on this datatype (or invalid)", s);
  const bool hasResult = kind != CollKind::Reduce || c.rank == root;
  if (coll::inPlace(sbuf) && !hasResult)
    return bad(fn, "RRT_IN_PLACE is only for the root", Status::ErrBuffer);
  if (!coll::inPlace(sbuf)) RRT_TRY(api::checkBuffer(fn, sbuf, bytes, "sendbuf"));
  if (hasResult) RRT_TRY(api::checkBuffer(fn, rbuf, bytes, "recvbuf"));
  a->kind = kind;
  a->sbuf = sbuf;
  a->rbuf = rbuf;
  a->count = count;
  a->typeSize = t->size;
  a->root = root;
  return Status::Ok;
}

Status checkAllgather(const char* fn, proto::Comm& c, const void* sbuf, size_t scount,
                      rrt_datatype_t stype, void* rbuf, size_t rcount, rrt_datatype_t rtype,
                      CollKind kind, CollArgs* a) {
  size_t rbytes, sbytes;
  RRT_TRY(typedBytes(fn, rtype, rcount, &rbytes));
  if (!coll::inPlace(sbuf)) {
    RRT_TRY(typedBytes(fn, stype, scount, &sbytes));
    if (sbytes != rbytes) return bad(fn, "send and receive sizes differ", Status::ErrCount);
    RRT_TRY(api::checkBuffer(fn, sbuf, sbytes, "sendbuf"));
  }
  RRT_TRY(api::checkBuffer(fn, rbuf, rbytes * static_cast<size_t>(c.size), "recvbuf"));
  a->kind = kind;
  a->sbuf = sbuf;
  a->rbuf = rbuf;
  a->blockBytes = rbytes;
  return Status::Ok;
}

}  // namespace


extern "C" {

// ---- barrier / bcast ------------------------------------------------------------------------

static int barrierImpl(const char* fn, rrt_comm_t comm, rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  Status s = checkCommon(fn, comm, &c);
  CollArgs a;
  a.kind = CollKind::Barrier;
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_barrier(rrt_comm_t comm) { return barrierImpl("rrt_barrier", comm, nullptr, false); }
int rrt_ibarrier(rrt_comm_t comm, rrt_request_t* request) {
  return barrierImpl("rrt_ibarrier", comm, request, true);
}

static int bcastImpl(const char* fn, void* buf, size_t count, rrt_datatype_t type, int root,
                     rrt_comm_t comm, rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  CollArgs a;
  Status s = checkCommon(fn, comm, &c);
  if (s == Status::Ok) s = checkBcast(fn, *c, buf, count, type, root, &a);
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_bcast(void* buf, size_t count, rrt_datatype_t type, int root, rrt_comm_t comm) {
  return bcastImpl("rrt_bcast", buf, count, type, root, comm, nullptr, false);
}
int rrt_ibcast(void* buf, size_t count, rrt_datatype_t type, int root, rrt_comm_t comm,
               rrt_request_t* request) {
  return bcastImpl("rrt_ibcast", buf, count, type, root, comm, request, true);
}

// ---- reduce / allreduce / scan / exscan -----------------------------------------------------

static int reductionImpl(const char* fn, CollKind kind, const void* sbuf, void* rbuf, size_t count,
                         rrt_datatype_t type, rrt_op_t op, int root, rrt_comm_t comm,
                         rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  CollArgs a;
  Status s = checkCommon(fn, comm, &c);
  if (s == Status::Ok) s = checkReduction(fn, *c, kind, sbuf, rbuf, count, type, op, root, &a);
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_reduce(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
               int root, rrt_comm_t comm) {
  return reductionImpl("rrt_reduce", CollKind::Reduce, sbuf, rbuf, count, type, op, root, comm,
                       nullptr, false);
}
int rrt_ireduce(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
                int root, rrt_comm_t comm, rrt_request_t* request) {
  return reductionImpl("rrt_ireduce", CollKind::Reduce, sbuf, rbuf, count, type, op, root, comm,
                       request, true);
}
int rrt_allreduce(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
                  rrt_comm_t comm) {
  return reductionImpl("rrt_allreduce", CollKind::Allreduce, sbuf, rbuf, count, type, op, 0, comm,
                       nullptr, false);
}
int rrt_iallreduce(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
                   rrt_comm_t comm, rrt_request_t* request) {
  return reductionImpl("rrt_iallreduce", CollKind::Allreduce, sbuf, rbuf, count, type, op, 0,
                       comm, request, true);
}
int rrt_scan(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
             rrt_comm_t comm) {
  return reductionImpl("rrt_scan", CollKind::Scan, sbuf, rbuf, count, type, op, 0, comm, nullptr,
                       false);
}
int rrt_iscan(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
              rrt_comm_t comm, rrt_request_t* request) {
  return reductionImpl("rrt_iscan", CollKind::Scan, sbuf, rbuf, count, type, op, 0, comm, request,
                       true);
}
int rrt_exscan(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
               rrt_comm_t comm) {
  return reductionImpl("rrt_exscan", CollKind::Exscan, sbuf, rbuf, count, type, op, 0, comm,
                       nullptr, false);
}
int rrt_iexscan(const void* sbuf, void* rbuf, size_t count, rrt_datatype_t type, rrt_op_t op,
                rrt_comm_t comm, rrt_request_t* request) {
  return reductionImpl("rrt_iexscan", CollKind::Exscan, sbuf, rbuf, count, type, op, 0, comm,
                       request, true);
}

// ---- reduce_scatter ---------------------------------------------------------------------------

static int reduceScatterImpl(const char* fn, const void* sbuf, void* rbuf, const size_t* rcounts,
                             size_t blockCount, bool block, rrt_datatype_t type, rrt_op_t op,
                             rrt_comm_t comm, rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  CollArgs a;
  Status s = checkCommon(fn, comm, &c);
  const core::TypeInfo* t = nullptr;
  if (s == Status::Ok) s = api::checkType(fn, type, &t);
  if (s == Status::Ok && !block && !rcounts) s = bad(fn, "recvcounts must not be NULL", Status::ErrArg);
  if (s == Status::Ok) {
    s = coll::makeReducer(op, type, &a.reducer);
    if (s != Status::Ok) (void)bad(fn, "op is not defined on this datatype (or invalid)", s);
  }
  size_t total = 0;
  if (s == Status::Ok) {
    a.recvOffs = coll::sizesPool().take(static_cast<size_t>(c->size));
    a.recvBytes = coll::sizesPool().take(static_cast<size_t>(c->size));
  }
  for (int i = 0; s == Status::Ok && i < c->size; ++i) {
    size_t b = 0;
    s = api::checkCountBytes(fn, block ? blockCount : rcounts[i], t->size, &b);
    a.recvOffs.push_back(total);
    a.recvBytes.push_back(b);
    total += b;
  }
  if (s == Status::Ok && !coll::inPlace(sbuf)) s = api::checkBuffer(fn, sbuf, total, "sendbuf");
  if (s == Status::Ok)
    s = api::checkBuffer(fn, rbuf, coll::inPlace(sbuf) ? total : a.recvBytes[static_cast<size_t>(c->rank)], "recvbuf");
  a.kind = CollKind::ReduceScatter;
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  a.typeSize = t ? t->size : 0;
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_reduce_scatter_block(const void* sbuf, void* rbuf, size_t recvcount, rrt_datatype_t type,
                             rrt_op_t op, rrt_comm_t comm) {
  return reduceScatterImpl("rrt_reduce_scatter_block", sbuf, rbuf, nullptr, recvcount, true, type,
                           op, comm, nullptr, false);
}
int rrt_ireduce_scatter_block(const void* sbuf, void* rbuf, size_t recvcount, rrt_datatype_t type,
                              rrt_op_t op, rrt_comm_t comm, rrt_request_t* request) {
  return reduceScatterImpl("rrt_ireduce_scatter_block", sbuf, rbuf, nullptr, recvcount, true,
                           type, op, comm, request, true);
}
int rrt_reduce_scatter(const void* sbuf, void* rbuf, const size_t* recvcounts, rrt_datatype_t type,
                       rrt_op_t op, rrt_comm_t comm) {
  return reduceScatterImpl("rrt_reduce_scatter", sbuf, rbuf, recvcounts, 0, false, type, op, comm,
                           nullptr, false);
}
int rrt_ireduce_scatter(const void* sbuf, void* rbuf, const size_t* recvcounts,
                        rrt_datatype_t type, rrt_op_t op, rrt_comm_t comm, rrt_request_t* request) {
  return reduceScatterImpl("rrt_ireduce_scatter", sbuf, rbuf, recvcounts, 0, false, type, op,
                           comm, request, true);
}

// ---- allgather(v) ------------------------------------------------------------------------------

static int allgatherImpl(const char* fn, const void* sbuf, size_t scount, rrt_datatype_t stype,
                         void* rbuf, size_t rcount, rrt_datatype_t rtype, rrt_comm_t comm,
                         rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  CollArgs a;
  Status s = checkCommon(fn, comm, &c);
  if (s == Status::Ok)
    s = checkAllgather(fn, *c, sbuf, scount, stype, rbuf, rcount, rtype, CollKind::Allgather, &a);
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_allgather(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf,
                  size_t rcount, rrt_datatype_t rtype, rrt_comm_t comm) {
  return allgatherImpl("rrt_allgather", sbuf, scount, stype, rbuf, rcount, rtype, comm, nullptr,
                       false);
}
int rrt_iallgather(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf,
                   size_t rcount, rrt_datatype_t rtype, rrt_comm_t comm, rrt_request_t* request) {
  return allgatherImpl("rrt_iallgather", sbuf, scount, stype, rbuf, rcount, rtype, comm, request,
                       true);
}

static int allgathervImpl(const char* fn, const void* sbuf, size_t scount, rrt_datatype_t stype,
                          void* rbuf, const size_t* rcounts, const size_t* displs,
                          rrt_datatype_t rtype, rrt_comm_t comm, rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  CollArgs a;
  Status s = checkCommon(fn, comm, &c);
  size_t extent = 0;
  if (s == Status::Ok) s = vectorBytes(fn, *c, rtype, rcounts, displs, &a.recvBytes, &a.recvOffs, &extent);
  if (s == Status::Ok && !coll::inPlace(sbuf)) {
    size_t sbytes = 0;
    s = typedBytes(fn, stype, scount, &sbytes);
    if (s == Status::Ok && sbytes != a.recvBytes[static_cast<size_t>(c->rank)])
      s = bad(fn, "sendcount differs from recvcounts[rank]", Status::ErrCount);
    if (s == Status::Ok) s = api::checkBuffer(fn, sbuf, sbytes, "sendbuf");
  }
  if (s == Status::Ok) s = api::checkBuffer(fn, rbuf, extent, "recvbuf");
  a.kind = CollKind::Allgatherv;
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_allgatherv(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf,
                   const size_t* rcounts, const size_t* displs, rrt_datatype_t rtype,
                   rrt_comm_t comm) {
  return allgathervImpl("rrt_allgatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                        nullptr, false);
}
int rrt_iallgatherv(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf,
                    const size_t* rcounts, const size_t* displs, rrt_datatype_t rtype,
                    rrt_comm_t comm, rrt_request_t* request) {
  return allgathervImpl("rrt_iallgatherv", sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm,
                        request, true);
}

// ---- alltoall(v) -------------------------------------------------------------------------------

static int alltoallImpl(const char* fn, const void* sbuf, size_t scount, rrt_datatype_t stype,
                        void* rbuf, size_t rcount, rrt_datatype_t rtype, rrt_comm_t comm,
                        rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  CollArgs a;
  Status s = checkCommon(fn, comm, &c);
  if (s == Status::Ok)
    s = checkAllgather(fn, *c, sbuf, scount, stype, rbuf, rcount, rtype, CollKind::Alltoall, &a);
  if (s == Status::Ok && !coll::inPlace(sbuf))
    s = api::checkBuffer(fn, sbuf, a.blockBytes * static_cast<size_t>(c->size), "sendbuf");
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_alltoall(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf, size_t rcount,
                 rrt_datatype_t rtype, rrt_comm_t comm) {
  return alltoallImpl("rrt_alltoall", sbuf, scount, stype, rbuf, rcount, rtype, comm, nullptr,
                      false);
}
int rrt_ialltoall(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf,
                  size_t rcount, rrt_datatype_t rtype, rrt_comm_t comm, rrt_request_t* request) {
  return alltoallImpl("rrt_ialltoall", sbuf, scount, stype, rbuf, rcount, rtype, comm, request,
                      true);
}

static int alltoallvImpl(const char* fn, const void* sbuf, const size_t* scounts,
                         const size_t* sdispls, rrt_datatype_t stype, void* rbuf,
                         const size_t* rcounts, const size_t* rdispls, rrt_datatype_t rtype,
                         rrt_comm_t comm, rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  CollArgs a;
  Status s = checkCommon(fn, comm, &c);
  size_t rext = 0, sext = 0;
  if (s == Status::Ok) s = vectorBytes(fn, *c, rtype, rcounts, rdispls, &a.recvBytes, &a.recvOffs, &rext);
  if (s == Status::Ok && !coll::inPlace(sbuf)) {
    s = vectorBytes(fn, *c, stype, scounts, sdispls, &a.sendBytes, &a.sendOffs, &sext);
    if (s == Status::Ok) s = api::checkBuffer(fn, sbuf, sext, "sendbuf");
  }
  if (s == Status::Ok) s = api::checkBuffer(fn, rbuf, rext, "recvbuf");
  a.kind = CollKind::Alltoallv;
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  return launch(fn, c, s, std::move(a), request, nb);
}
int rrt_alltoallv(const void* sbuf, const size_t* scounts, const size_t* sdispls,
                  rrt_datatype_t stype, void* rbuf, const size_t* rcounts, const size_t* rdispls,
                  rrt_datatype_t rtype, rrt_comm_t comm) {
  return alltoallvImpl("rrt_alltoallv", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                       rtype, comm, nullptr, false);
}
int rrt_ialltoallv(const void* sbuf, const size_t* scounts, const size_t* sdispls,
                   rrt_datatype_t stype, void* rbuf, const size_t* rcounts, const size_t* rdispls,
                   rrt_datatype_t rtype, rrt_comm_t comm, rrt_request_t* request) {
  return alltoallvImpl("rrt_ialltoallv", sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls,
                       rtype, comm, request, true);
}

// ---- gather(v) / scatter(v) --------------------------------------------------------------------

// gather and scatter are mirror images. Every rank has a leaf buffer (gather: what it sends,
// scatter: what it receives; at the root RRT_IN_PLACE skips it), the root also the whole buffer
// of size blocks (rootCount each, or rootCounts/displs for the v forms).
struct Rooted {
  bool v;
  const void* leafBuf;
  size_t leafCount;
  rrt_datatype_t leafType;
  const char* leafName;  // "sendbuf" / "recvbuf", for error lines
  const void* rootBuf;
  size_t rootCount;
  const size_t* rootCounts;
  const size_t* displs;
  rrt_datatype_t rootType;
  const char* rootName;
};

// vBytes / vOffs: the CollArgs fields the v forms fill at the root.
using SizesField = std::vector<size_t> CollArgs::*;
static int rootedImpl(const char* fn, const Rooted& x, CollArgs a, SizesField vBytes,
                      SizesField vOffs, int root, rrt_comm_t comm, rrt_request_t* request,
                      bool nb) {
  proto::Comm* c = nullptr;
  const bool v = x.v;
  a.root = root;
  Status s = checkCommon(fn, comm, &c);
  if (s == Status::Ok) s = api::checkRoot(fn, *c, root);
  const bool isRoot = s == Status::Ok && c->rank == root;
  size_t leafBytes = 0, block = 0, extent = 0;
  if (s == Status::Ok && coll::inPlace(x.leafBuf) && !isRoot)
    s = bad(fn, "RRT_IN_PLACE is only for the root", Status::ErrBuffer);
  if (s == Status::Ok && !coll::inPlace(x.leafBuf)) {
    s = typedBytes(fn, x.leafType, x.leafCount, &leafBytes);
    if (s == Status::Ok) s = api::checkBuffer(fn, x.leafBuf, leafBytes, x.leafName);
  }
  if (s == Status::Ok && isRoot) {
    if (v) {
      s = vectorBytes(fn, *c, x.rootType, x.rootCounts, x.displs, &(a.*vBytes), &(a.*vOffs),
                      &extent);
      if (s == Status::Ok) block = (a.*vBytes)[static_cast<size_t>(root)];
    } else {
      s = typedBytes(fn, x.rootType, x.rootCount, &block);
      extent = block * static_cast<size_t>(c->size);
    }
    if (s == Status::Ok && !coll::inPlace(x.leafBuf) && leafBytes != block)
      s = bad(fn, "the root's send and receive sizes differ", Status::ErrCount);
    if (s == Status::Ok) s = api::checkBuffer(fn, x.rootBuf, extent, x.rootName);
  }
  a.blockBytes = isRoot && !v ? block : leafBytes;
  return launch(fn, c, s, std::move(a), request, nb);
}

// gather: the root receives (rcount or rcounts/displs), everyone sends scount.
static int gatherImpl(const char* fn, const void* sbuf, size_t scount, rrt_datatype_t stype,
                      void* rbuf, size_t rcount, const size_t* rcounts, const size_t* displs,
                      rrt_datatype_t rtype, int root, rrt_comm_t comm, rrt_request_t* request,
                      bool nb, bool v) {
  CollArgs a;
  a.kind = v ? CollKind::Gatherv : CollKind::Gather;
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  const Rooted x{v, sbuf, scount, stype, "sendbuf", rbuf, rcount, rcounts, displs, rtype,
                 "recvbuf"};
  return rootedImpl(fn, x, std::move(a), &CollArgs::recvBytes, &CollArgs::recvOffs, root, comm,
                    request, nb);
}
int rrt_gather(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf, size_t rcount,
               rrt_datatype_t rtype, int root, rrt_comm_t comm) {
  return gatherImpl("rrt_gather", sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype, root,
                    comm, nullptr, false, false);
}
int rrt_igather(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf, size_t rcount,
                rrt_datatype_t rtype, int root, rrt_comm_t comm, rrt_request_t* request) {
  return gatherImpl("rrt_igather", sbuf, scount, stype, rbuf, rcount, nullptr, nullptr, rtype,
                    root, comm, request, true, false);
}
int rrt_gatherv(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf,
                const size_t* rcounts, const size_t* displs, rrt_datatype_t rtype, int root,
                rrt_comm_t comm) {
  return gatherImpl("rrt_gatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root,
                    comm, nullptr, false, true);
}
int rrt_igatherv(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf,
                 const size_t* rcounts, const size_t* displs, rrt_datatype_t rtype, int root,
                 rrt_comm_t comm, rrt_request_t* request) {
  return gatherImpl("rrt_igatherv", sbuf, scount, stype, rbuf, 0, rcounts, displs, rtype, root,
                    comm, request, true, true);
}

// scatter: the root sends (scount or scounts/displs), everyone receives rcount.
static int scatterImpl(const char* fn, const void* sbuf, size_t scount, const size_t* scounts,
                       const size_t* displs, rrt_datatype_t stype, void* rbuf, size_t rcount,
                       rrt_datatype_t rtype, int root, rrt_comm_t comm, rrt_request_t* request,
                       bool nb, bool v) {
  CollArgs a;
  a.kind = v ? CollKind::Scatterv : CollKind::Scatter;
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  const Rooted x{v, rbuf, rcount, rtype, "recvbuf", sbuf, scount, scounts, displs, stype,
                 "sendbuf"};
  return rootedImpl(fn, x, std::move(a), &CollArgs::sendBytes, &CollArgs::sendOffs, root, comm,
                    request, nb);
}
int rrt_scatter(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf, size_t rcount,
                rrt_datatype_t rtype, int root, rrt_comm_t comm) {
  return scatterImpl("rrt_scatter", sbuf, scount, nullptr, nullptr, stype, rbuf, rcount, rtype,
                     root, comm, nullptr, false, false);
}
int rrt_iscatter(const void* sbuf, size_t scount, rrt_datatype_t stype, void* rbuf, size_t rcount,
                 rrt_datatype_t rtype, int root, rrt_comm_t comm, rrt_request_t* request) {
  return scatterImpl("rrt_iscatter", sbuf, scount, nullptr, nullptr, stype, rbuf, rcount, rtype,
                     root, comm, request, true, false);
}
int rrt_scatterv(const void* sbuf, const size_t* scounts, const size_t* displs,
                 rrt_datatype_t stype, void* rbuf, size_t rcount, rrt_datatype_t rtype, int root,
                 rrt_comm_t comm) {
  return scatterImpl("rrt_scatterv", sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root,
                     comm, nullptr, false, true);
}
int rrt_iscatterv(const void* sbuf, const size_t* scounts, const size_t* displs,
                  rrt_datatype_t stype, void* rbuf, size_t rcount, rrt_datatype_t rtype, int root,
                  rrt_comm_t comm, rrt_request_t* request) {
  return scatterImpl("rrt_iscatterv", sbuf, 0, scounts, displs, stype, rbuf, rcount, rtype, root,
                     comm, request, true, true);
}

// ---- neighbourhood exchange ---------------------------------------------------------------------

// One side of the exchange: n neighbours (ranks of c or RRT_PROC_NULL) with their counts and
// displacements in elements, to bytes; *extent: the bytes of the buffer it spans.
static Status neighborSide(const char* fn, const proto::Comm& c, size_t n, const int* peers,
                           const size_t* counts, const size_t* displs, size_t typeSize,
                           const char* what, std::vector<int>* outPeers,
                           std::vector<size_t>* bytes, std::vector<size_t>* offs, size_t* extent) {
  *extent = 0;
  if (n == 0) return Status::Ok;
  if (!peers || !counts || !displs) {
    RRT_WARN("%s: the %s, their counts and displacements must not be NULL", fn, what);
    return Status::ErrArg;
  }
  for (size_t i = 0; i < n; ++i) {
    if (peers[i] != RRT_PROC_NULL && (peers[i] < 0 || peers[i] >= c.size)) {
      RRT_WARN("%s: %s[%zu] = %d is not a rank of the communicator", fn, what, i, peers[i]);
      return Status::ErrRank;
    }
    size_t b = 0, o = 0;
    RRT_TRY(api::checkCountBytes(fn, counts[i], typeSize, &b));
    RRT_TRY(api::checkCountBytes(fn, displs[i], typeSize, &o));
    if (peers[i] != RRT_PROC_NULL && b > 0 && o + b > *extent) *extent = o + b;
    bytes->push_back(b);
    offs->push_back(o);
  }
  outPeers->assign(peers, peers + n);
  return Status::Ok;
}

static int neighborImpl(const char* fn, const void* sbuf, const size_t* scounts,
                        const size_t* sdispls, void* rbuf, const size_t* rcounts,
                        const size_t* rdispls, rrt_datatype_t type, size_t nsources,
                        const int* sources, size_t ndests, const int* dests, rrt_comm_t comm,
                        rrt_request_t* request, bool nb) {
  proto::Comm* c = nullptr;
  coll::NeighborArgs a;
  Status s = checkCommon(fn, comm, &c);
  const core::TypeInfo* t = nullptr;
  if (s == Status::Ok) s = api::checkType(fn, type, &t);
  size_t rext = 0, sext = 0;
  if (s == Status::Ok)
    s = neighborSide(fn, *c, nsources, sources, rcounts, rdispls, t->size, "sources", &a.sources,
                     &a.recvBytes, &a.recvOffs, &rext);
  if (s == Status::Ok)
    s = neighborSide(fn, *c, ndests, dests, scounts, sdispls, t->size, "dests", &a.dests,
                     &a.sendBytes, &a.sendOffs, &sext);
  if (s == Status::Ok) s = api::checkBuffer(fn, sbuf, sext, "sendbuf");
  if (s == Status::Ok) s = api::checkBuffer(fn, rbuf, rext, "recvbuf");
  if (s == Status::Ok && nb && !request) s = bad(fn, "request must not be NULL", Status::ErrArg);
  if (s != Status::Ok) return api::finish(fn, c, s);
  a.sbuf = sbuf;
  a.rbuf = rbuf;
  core::Request* r = nullptr;
  RRT_API_CHECK(fn, c, coll::startNeighborExchange(*c, std::move(a), &r));
  if (nb) {
    *request = r;
    return RRT_SUCCESS;
  }
  return api::finish(fn, c, coll::await(r));
}
int rrt_neighbor_alltoallv(const void* sbuf, const size_t* scounts, const size_t* sdispls,
                           void* rbuf, const size_t* rcounts, const size_t* rdispls,
                           rrt_datatype_t type, size_t nsources, const int* sources, size_t ndests,
                           const int* dests, rrt_comm_t comm) {
  return neighborImpl("rrt_neighbor_alltoallv", sbuf, scounts, sdispls, rbuf, rcounts, rdispls,
                      type, nsources, sources, ndests, dests, comm, nullptr, false);
}
int rrt_ineighbor_alltoallv(const void* sbuf, const size_t* scounts, const size_t* sdispls,
                            void* rbuf, const size_t* rcounts, const size_t* rdispls,
                            rrt_datatype_t type, size_t nsources, const int* sources,
                            size_t ndests, const int* dests, rrt_comm_t comm,
                            rrt_request_t* request) {
  return neighborImpl("rrt_ineighbor_alltoallv", sbuf, scounts, sdispls, rbuf, rcounts, rdispls,
                      type, nsources, sources, ndests, dests, comm, request, true);
}

// ---- user ops ----------------------------------------------------------------------------------

int rrt_op_create(rrt_user_function* fn, void* user_data, int commutative, rrt_op_t* op) {
  RRT_API_CHECK("rrt_op_create", nullptr, api::checkActive("rrt_op_create"));
  if (!fn || !op) RRT_API_FAIL("rrt_op_create", nullptr, bad("rrt_op_create", "fn and op must not be NULL", Status::ErrArg));
  return api::finish("rrt_op_create", nullptr, coll::opCreate(fn, user_data, commutative != 0, op));
}

int rrt_op_free(rrt_op_t* op) {
  RRT_API_CHECK("rrt_op_free", nullptr, api::checkActive("rrt_op_free"));
  if (!op) RRT_API_FAIL("rrt_op_free", nullptr, bad("rrt_op_free", "op must not be NULL", Status::ErrArg));
  return api::finish("rrt_op_free", nullptr, coll::opFree(op));
}

int rrt_reduce_local(const void* inbuf, void* inoutbuf, size_t count, rrt_datatype_t type,
                     rrt_op_t op) {
  const char* fn = "rrt_reduce_local";
  RRT_API_CHECK(fn, nullptr, api::checkActive(fn));
  size_t bytes;
  RRT_API_CHECK(fn, nullptr, typedBytes(fn, type, count, &bytes));
  coll::Reducer red;
  if (coll::makeReducer(op, type, &red) != Status::Ok)
    RRT_API_FAIL(fn, nullptr, bad(fn, "op is not defined on this datatype (or invalid)", Status::ErrOp));
  RRT_API_CHECK(fn, nullptr, api::checkBuffer(fn, inbuf, bytes, "inbuf"));
  RRT_API_CHECK(fn, nullptr, api::checkBuffer(fn, inoutbuf, bytes, "inoutbuf"));
  const auto in = reinterpret_cast<uintptr_t>(inbuf), io = reinterpret_cast<uintptr_t>(inoutbuf);
  if (bytes && in < io + bytes && io < in + bytes)  // the kernels assume no aliasing
    RRT_API_FAIL(fn, nullptr, bad(fn, "inbuf and inoutbuf overlap", Status::ErrBuffer));
  if (gpu::isDevice(inbuf, bytes) || gpu::isDevice(inoutbuf, bytes))
    RRT_API_FAIL(fn, nullptr, bad(fn, "device buffers are not supported", Status::ErrUnsupported));
  red.apply(inbuf, inoutbuf, count);
  return RRT_SUCCESS;
}

}  // extern "C"
