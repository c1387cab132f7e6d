// Collectives, blocking and non-blocking: each is one rrt collective, after translating int
// counts and displacements to size_t, MPI_IN_PLACE to RRT_IN_PLACE, and staging non-dense
// datatypes. Arguments MPI calls insignificant (the receive side of MPI_Gather on a non-root,
// for example) are not looked at, since programs pass anything there.
#include <vector>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {

// The size_t count and displacement arrays a call hands to rrt: rrt reads them during the call
// only, also in the non-blocking twins (rrt.h), so they come from a few process-wide buffers
// reused from call to call instead of the heap (a v-collective of predefined or dense types
// then allocates nothing here). MPI calls do not nest: the layer provides
// MPI_THREAD_SERIALIZED at most, and user operations may not call MPI.
constexpr int kSizeArrays = 4;  // alltoallv: counts and displacements of both sides
std::vector<size_t> gSizeArrays[kSizeArrays];

// One collective call in progress through the layer.
struct Call {
  MPI_Comm comm;
  Comm* c = nullptr;
  const char* fn;
  MPI_Request* req;  // nullptr: blocking
  Stage st;
  rrt_request_t rr = RRT_REQUEST_NULL;
  int err = MPI_SUCCESS;

  Call(MPI_Comm comm_, const char* fn_, MPI_Request* req_) : comm(comm_), fn(fn_), req(req_) {
    c = commCheck(comm, fn, &err);
    if (c != nullptr && c->inter) {  // collectives on intercommunicators are not provided
      err = raise(comm, MPI_ERR_COMM, fn);
      c = nullptr;
    }
  }
  bool ok() const { return c != nullptr && err == MPI_SUCCESS; }
  rrt_request_t* reqOut() { return &rr; }
  // Room for n entries, valid until the call returns (gSizeArrays); at most kSizeArrays per
  // call.
  size_t* sizes(size_t n) {
    std::vector<size_t>& v = gSizeArrays[nSizes++];
    if (v.size() < n) v.resize(n);
    return v.data();
  }
  int nSizes = 0;
  // The type handle, committed, or nullptr after raising MPI_ERR_TYPE.
  Type* type(MPI_Datatype dt) {
    Type* t = typeGet(dt);
    if (t == nullptr || !t->committed) {
      err = raise(comm, MPI_ERR_TYPE, fn);
      return nullptr;
    }
    return t;
  }
  bool count(int n) {
    if (n < 0) err = raise(comm, MPI_ERR_COUNT, fn);
    return n >= 0;
  }
  // After the rrt call: runs the staging now (blocking) or hands it to a new request.
  int done(int rc) {
    if (rc != RRT_SUCCESS) return check(comm, rc, fn);
    if (req == nullptr) {
      st.finish();
    } else {
      *req = requestMake(rr, comm, std::move(st), false);
    }
    return MPI_SUCCESS;
  }
};

// Counts of one rank's block as rrt sees them (bytes for derived types).
size_t unit(const Type& t, size_t n) { return t.predefined ? n : n * t.size; }
rrt_datatype_t unitType(const Type& t) { return t.predefined ? t.rrtType : RRT_BYTE; }

bool inPlace(const void* p) { return p == MPI_IN_PLACE; }

// Per-rank counts and displacements (in extents of t) for the v-collectives.
struct VBuf {
  void* ptr = nullptr;
  const size_t* counts = nullptr;
  const size_t* displs = nullptr;
  rrt_datatype_t type = RRT_BYTE;
};
VBuf stageV(Call& k, const Type& t, const void* buf, const int* counts, const int* displs,
            int n, bool out, bool inout) {
  VBuf v;
  Stage& st = k.st;
  size_t* c = k.sizes(static_cast<size_t>(n));
  size_t* d = k.sizes(static_cast<size_t>(n));
  if (t.predefined || typeDense(t)) {
    for (int i = 0; i < n; ++i) {
      c[i] = unit(t, static_cast<size_t>(counts[i]));
      d[i] = t.predefined ? static_cast<size_t>(displs[i])
                          : static_cast<size_t>(static_cast<long>(displs[i]) * t.extent);
    }
    v.ptr = const_cast<char*>(static_cast<const char*>(buf)) + (t.predefined ? 0 : typeDataOffset(t));
    v.type = unitType(t);
  } else {
    // Packed: rank i's block at the running sum of the counts before it.
    size_t total = 0;
    for (int i = 0; i < n; ++i) {
      c[i] = static_cast<size_t>(counts[i]) * t.size;
      d[i] = total;
      total += c[i];
    }
    char* tmp = st.temp(total);
    std::vector<long> off(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) off[i] = static_cast<long>(displs[i]) * t.extent;
    if (!out || inout)
      for (int i = 0; i < n; ++i)
        typePack(t, static_cast<const char*>(buf) + off[i], static_cast<size_t>(counts[i]), tmp + d[i]);
    if (out) {
      Type lay;
      lay.blocks = t.blocks;
      lay.extent = t.extent;
      std::vector<size_t> cnt(counts, counts + n), at(d, d + n);
      char* user = static_cast<char*>(const_cast<void*>(buf));
      st.onFinish([lay, tmp, at, off, cnt, user, sz = t.size](size_t) {
        for (size_t i = 0; i < cnt.size(); ++i)
          typeUnpack(lay, tmp + at[i], cnt[i] * sz, user + off[i], cnt[i]);
      });
    }
    v.ptr = tmp;
    v.type = RRT_BYTE;
  }
  v.counts = c;
  v.displs = d;
  return v;
}

// How a reduction's data reaches rrt: predefined ops work on the datatype's one predefined base
// type (packed if need be); user ops get whole elements of the MPI datatype (see op.cc).
struct Red {
  Type* t = nullptr;
  Op* op = nullptr;
  bool user = false;
  rrt_datatype_t utype = RRT_DATATYPE_NULL;
};
bool resolve(Call& k, MPI_Datatype dt, MPI_Op op, int count, Red* r) {
  if (!k.count(count)) return false;
  r->t = k.type(dt);
  if (!r->t) return false;
  r->op = opGet(op);
  if (r->op == nullptr) {
    k.err = raise(k.comm, MPI_ERR_OP, k.fn);
    return false;
  }
  r->user = r->op->fn != nullptr;
  if (r->user) {
    if (int e = typeOpType(dt, *r->t, &r->utype)) {
      k.err = raise(k.comm, e, k.fn);
      return false;
    }
  } else if (r->t->base == RRT_DATATYPE_NULL && r->t->size > 0) {
    k.err = raise(k.comm, MPI_ERR_OP, k.fn);  // a predefined op on a mixed-type datatype
    return false;
  }
  return true;
}
size_t redCount(const Red& r, size_t n) { return r.user ? n : n * r.t->nBasic; }
rrt_datatype_t redType(const Red& r) { return r.user ? r.utype : r.t->base; }
RrtBuf redIn(Stage& st, const Red& r, const void* buf, size_t n) {
  if (inPlace(buf)) return RrtBuf{RRT_IN_PLACE, redCount(r, n), redType(r)};
  if (r.user) return RrtBuf{const_cast<void*>(buf), n, r.utype};
  return stageIn(st, *r.t, buf, n, true);
}
RrtBuf redOut(Stage& st, const Red& r, void* buf, size_t n, bool inout) {
  if (r.user) return RrtBuf{buf, n, r.utype};
  return stageOut(st, *r.t, buf, n, inout, true);
}

// ---- the collectives, with req == nullptr for the blocking form -----------------------------

int barrier(MPI_Comm comm, MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  return k.done(req ? rrt_ibarrier(k.c->rc, k.reqOut()) : rrt_barrier(k.c->rc));
}

int bcast(void* buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request* req,
          const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok() || !k.count(count)) return k.err;
  Type* t = k.type(dt);
  if (!t) return k.err;
  bool isRoot = k.c->rank == root;
  RrtBuf b = isRoot ? stageIn(k.st, *t, buf, static_cast<size_t>(count))
                    : stageOut(k.st, *t, buf, static_cast<size_t>(count), false);
  return k.done(req ? rrt_ibcast(b.ptr, b.count, b.type, root, k.c->rc, k.reqOut())
                    : rrt_bcast(b.ptr, b.count, b.type, root, k.c->rc));
}

int reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
           MPI_Comm comm, MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  Red r;
  if (!resolve(k, dt, op, count, &r)) return k.err;
  size_t n = static_cast<size_t>(count);
  bool isRoot = k.c->rank == root;
  RrtBuf s = redIn(k.st, r, sendbuf, n);
  // Non-roots pass no receive buffer: theirs is insignificant and may alias sendbuf.
  RrtBuf d = isRoot ? redOut(k.st, r, recvbuf, n, inPlace(sendbuf)) : RrtBuf{nullptr, s.count, s.type};
  return k.done(req ? rrt_ireduce(s.ptr, d.ptr, s.count, s.type, r.op->rop, root, k.c->rc, k.reqOut())
                    : rrt_reduce(s.ptr, d.ptr, s.count, s.type, r.op->rop, root, k.c->rc));
}

// allreduce, scan and exscan share their shape.
enum class AllRed { All, Scan, Exscan };
int allred(AllRed kind, const void* sendbuf, void* recvbuf, int count, MPI_Datatype dt, MPI_Op op,
           MPI_Comm comm, MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  Red r;
  if (!resolve(k, dt, op, count, &r)) return k.err;
  size_t n = static_cast<size_t>(count);
  RrtBuf s = redIn(k.st, r, sendbuf, n);
  RrtBuf d = redOut(k.st, r, recvbuf, n, inPlace(sendbuf));
  rrt_comm_t c = k.c->rc;
  rrt_op_t o = r.op->rop;
  int rc;
  switch (kind) {
    case AllRed::All:
      rc = req ? rrt_iallreduce(s.ptr, d.ptr, s.count, s.type, o, c, k.reqOut())
               : rrt_allreduce(s.ptr, d.ptr, s.count, s.type, o, c);
      break;
    case AllRed::Scan:
      rc = req ? rrt_iscan(s.ptr, d.ptr, s.count, s.type, o, c, k.reqOut())
               : rrt_scan(s.ptr, d.ptr, s.count, s.type, o, c);
      break;
    default:
      rc = req ? rrt_iexscan(s.ptr, d.ptr, s.count, s.type, o, c, k.reqOut())
               : rrt_exscan(s.ptr, d.ptr, s.count, s.type, o, c);
  }
  return k.done(rc);
}

int reduceScatterBlock(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm, MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  Red r;
  if (!resolve(k, dt, op, recvcount, &r)) return k.err;
  size_t n = static_cast<size_t>(recvcount), p = static_cast<size_t>(k.c->size);
  RrtBuf s = redIn(k.st, r, sendbuf, n * p);
  // In place, the input is all of recvbuf (p blocks); the result is its first block.
  RrtBuf d = redOut(k.st, r, recvbuf, inPlace(sendbuf) ? n * p : n, inPlace(sendbuf));
  size_t each = redCount(r, n);
  return k.done(req ? rrt_ireduce_scatter_block(s.ptr, d.ptr, each, redType(r), r.op->rop, k.c->rc,
                                                k.reqOut())
                    : rrt_reduce_scatter_block(s.ptr, d.ptr, each, redType(r), r.op->rop, k.c->rc));
}

int reduceScatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype dt,
                  MPI_Op op, MPI_Comm comm, MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  size_t total = 0;
  size_t* counts = k.sizes(static_cast<size_t>(k.c->size));
  for (int i = 0; i < k.c->size; ++i) {
    if (!k.count(recvcounts[i])) return k.err;
    total += static_cast<size_t>(recvcounts[i]);
  }
  Red r;
  if (!resolve(k, dt, op, 0, &r)) return k.err;
  for (int i = 0; i < k.c->size; ++i) counts[i] = redCount(r, static_cast<size_t>(recvcounts[i]));
  size_t mine = static_cast<size_t>(recvcounts[k.c->rank]);
  RrtBuf s = redIn(k.st, r, sendbuf, total);
  RrtBuf d = redOut(k.st, r, recvbuf, inPlace(sendbuf) ? total : mine, inPlace(sendbuf));
  return k.done(req ? rrt_ireduce_scatter(s.ptr, d.ptr, counts, redType(r), r.op->rop, k.c->rc,
                                          k.reqOut())
                    : rrt_reduce_scatter(s.ptr, d.ptr, counts, redType(r), r.op->rop, k.c->rc));
}

// ---- data movement ----------------------------------------------------------------------------

// gather, scatter, allgather and alltoall: fixed counts per rank.
enum class Fixed { Gather, Scatter, Allgather, Alltoall };
int fixed(Fixed kind, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
          int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* req,
          const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  size_t p = static_cast<size_t>(k.c->size);
  bool isRoot = k.c->rank == root;
  // Which sides matter on this rank (MPI 3.1 section 5).
  bool sendSig, recvSig;
  size_t sendTotal = static_cast<size_t>(sendcount), recvTotal = static_cast<size_t>(recvcount);
  switch (kind) {
    case Fixed::Gather:
      sendSig = !(isRoot && inPlace(sendbuf));
      recvSig = isRoot;
      recvTotal *= p;
      break;
    case Fixed::Scatter:
      sendSig = isRoot;
      recvSig = !(isRoot && inPlace(recvbuf));
      sendTotal *= p;
      break;
    case Fixed::Allgather:
      sendSig = !inPlace(sendbuf);
      recvSig = true;
      recvTotal *= p;
      break;
    default:
      sendSig = !inPlace(sendbuf);
      recvSig = true;
      sendTotal *= p;
      recvTotal *= p;
  }
  RrtBuf s{inPlace(sendbuf) ? RRT_IN_PLACE : nullptr, 0, RRT_BYTE};
  RrtBuf d{inPlace(recvbuf) ? RRT_IN_PLACE : nullptr, 0, RRT_BYTE};
  size_t sEach = 0, dEach = 0;
  if (sendSig) {
    if (!k.count(sendcount)) return k.err;
    Type* t = k.type(sendtype);
    if (!t) return k.err;
    s = stageIn(k.st, *t, sendbuf, sendTotal);
    sEach = unit(*t, static_cast<size_t>(sendcount));
  }
  if (recvSig) {
    if (!k.count(recvcount)) return k.err;
    Type* t = k.type(recvtype);
    if (!t) return k.err;
    // In place, the receive buffer already holds this rank's own block: keep it.
    d = stageOut(k.st, *t, recvbuf, recvTotal, inPlace(sendbuf));
    dEach = unit(*t, static_cast<size_t>(recvcount));
  }
  rrt_comm_t c = k.c->rc;
  rrt_request_t* o = k.reqOut();
  int rc;
  switch (kind) {
    case Fixed::Gather:
      rc = req ? rrt_igather(s.ptr, sEach, s.type, d.ptr, dEach, d.type, root, c, o)
               : rrt_gather(s.ptr, sEach, s.type, d.ptr, dEach, d.type, root, c);
      break;
    case Fixed::Scatter:
      rc = req ? rrt_iscatter(s.ptr, sEach, s.type, d.ptr, dEach, d.type, root, c, o)
               : rrt_scatter(s.ptr, sEach, s.type, d.ptr, dEach, d.type, root, c);
      break;
    case Fixed::Allgather:
      rc = req ? rrt_iallgather(s.ptr, sEach, s.type, d.ptr, dEach, d.type, c, o)
               : rrt_allgather(s.ptr, sEach, s.type, d.ptr, dEach, d.type, c);
      break;
    default:
      rc = req ? rrt_ialltoall(s.ptr, sEach, s.type, d.ptr, dEach, d.type, c, o)
               : rrt_alltoall(s.ptr, sEach, s.type, d.ptr, dEach, d.type, c);
  }
  return k.done(rc);
}

int gatherv(bool all, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
            MPI_Comm comm, MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  bool recvSig = all || k.c->rank == root;
  RrtBuf s{RRT_IN_PLACE, 0, RRT_BYTE};
  size_t sEach = 0;
  if (!inPlace(sendbuf)) {
    if (!k.count(sendcount)) return k.err;
    Type* t = k.type(sendtype);
    if (!t) return k.err;
    s = stageIn(k.st, *t, sendbuf, static_cast<size_t>(sendcount));
    sEach = unit(*t, static_cast<size_t>(sendcount));
  }
  VBuf d;
  if (recvSig) {
    Type* t = k.type(recvtype);
    if (!t) return k.err;
    for (int i = 0; i < k.c->size; ++i)
      if (!k.count(recvcounts[i])) return k.err;
    d = stageV(k, *t, recvbuf, recvcounts, displs, k.c->size, true, inPlace(sendbuf));
  }
  rrt_comm_t c = k.c->rc;
  int rc;
  if (all)
    rc = req ? rrt_iallgatherv(s.ptr, sEach, s.type, d.ptr, d.counts, d.displs, d.type, c, k.reqOut())
             : rrt_allgatherv(s.ptr, sEach, s.type, d.ptr, d.counts, d.displs, d.type, c);
  else
    rc = req ? rrt_igatherv(s.ptr, sEach, s.type, d.ptr, d.counts, d.displs, d.type, root, c,
                            k.reqOut())
             : rrt_gatherv(s.ptr, sEach, s.type, d.ptr, d.counts, d.displs, d.type, root, c);
  return k.done(rc);
}

int scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  bool isRoot = k.c->rank == root;
  VBuf s;
  if (isRoot) {
    Type* t = k.type(sendtype);
    if (!t) return k.err;
    for (int i = 0; i < k.c->size; ++i)
      if (!k.count(sendcounts[i])) return k.err;
    s = stageV(k, *t, sendbuf, sendcounts, displs, k.c->size, false, false);
  }
  RrtBuf d{RRT_IN_PLACE, 0, RRT_BYTE};
  size_t dEach = 0;
  if (!(isRoot && inPlace(recvbuf))) {
    if (!k.count(recvcount)) return k.err;
    Type* t = k.type(recvtype);
    if (!t) return k.err;
    d = stageOut(k.st, *t, recvbuf, static_cast<size_t>(recvcount), false);
    dEach = unit(*t, static_cast<size_t>(recvcount));
  }
  rrt_comm_t c = k.c->rc;
  return k.done(req ? rrt_iscatterv(s.ptr, s.counts, s.displs, s.type, d.ptr, dEach, d.type, root,
                                    c, k.reqOut())
                    : rrt_scatterv(s.ptr, s.counts, s.displs, s.type, d.ptr, dEach, d.type, root, c));
}

int alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[],
              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  int p = k.c->size;
  VBuf s;
  s.ptr = RRT_IN_PLACE;
  if (!inPlace(sendbuf)) {
    Type* t = k.type(sendtype);
    if (!t) return k.err;
    for (int i = 0; i < p; ++i)
      if (!k.count(sendcounts[i])) return k.err;
    s = stageV(k, *t, sendbuf, sendcounts, sdispls, p, false, false);
  }
  Type* t = k.type(recvtype);
  if (!t) return k.err;
  for (int i = 0; i < p; ++i)
    if (!k.count(recvcounts[i])) return k.err;
  VBuf d = stageV(k, *t, recvbuf, recvcounts, rdispls, p, true, inPlace(sendbuf));
  if (inPlace(sendbuf)) {  // in place, the send layout is the receive layout
    s.counts = d.counts;
    s.displs = d.displs;
    s.type = d.type;
  }
  rrt_comm_t c = k.c->rc;
  return k.done(req ? rrt_ialltoallv(s.ptr, s.counts, s.displs, s.type, d.ptr, d.counts, d.displs,
                                     d.type, c, k.reqOut())
                    : rrt_alltoallv(s.ptr, s.counts, s.displs, s.type, d.ptr, d.counts, d.displs,
                                    d.type, c));
}

// alltoallw: every block has its own datatype and a displacement in bytes. When every datatype
// is dense, rrt's alltoallv moves the blocks straight between the user's buffers as bytes (each
// displacement shifted to its type's first data byte). Otherwise the blocks go packed (t.size
// bytes per element) at running offsets of one send and one receive buffer, and the received
// ones are unpacked into place on completion, from copies of the layouts (the program may free
// its datatypes before a non-blocking call ends).
bool denseAt(const Type& t, int displ, size_t* at) {
  const long a = displ + (t.predefined ? 0 : typeDataOffset(t));
  if (!(t.predefined || typeDense(t)) || a < 0) return false;
  *at = static_cast<size_t>(a);
  return true;
}

int alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
              MPI_Request* req, const char* fn) {
  Call k(comm, fn, req);
  if (!k.ok()) return k.err;
  const size_t p = static_cast<size_t>(k.c->size);
  const bool inplace = inPlace(sendbuf);
  if (!recvcounts || !rdispls || !recvtypes ||
      (!inplace && (!sendcounts || !sdispls || !sendtypes)))
    return raise(comm, MPI_ERR_ARG, fn);
  std::vector<const Type*> rt(p), st(p);
  for (size_t i = 0; i < p; ++i) {
    if (!k.count(recvcounts[i]) || !(rt[i] = k.type(recvtypes[i]))) return k.err;
    if (!inplace && (!k.count(sendcounts[i]) || !(st[i] = k.type(sendtypes[i])))) return k.err;
  }
  if (inplace) {  // the receive layout is the send layout
    st = rt;
    sendcounts = recvcounts;
    sdispls = rdispls;
  }
  std::vector<size_t> sc(p), sd(p), rc(p), rd(p);
  bool dense = true;
  for (size_t i = 0; i < p; ++i) {
    sc[i] = static_cast<size_t>(sendcounts[i]) * st[i]->size;
    rc[i] = static_cast<size_t>(recvcounts[i]) * rt[i]->size;
    dense = dense && denseAt(*st[i], sdispls[i], &sd[i]) && denseAt(*rt[i], rdispls[i], &rd[i]);
  }
  const void* sb = inplace ? RRT_IN_PLACE : sendbuf;
  void* rb = recvbuf;
  if (!dense) {
    size_t stotal = 0, rtotal = 0;
    for (size_t i = 0; i < p; ++i) {
      sd[i] = stotal;
      stotal += sc[i];
      rd[i] = rtotal;
      rtotal += rc[i];
    }
    // In place, the send image is the receive buffer as it is now.
    const char* from = static_cast<const char*>(inplace ? recvbuf : sendbuf);
    char* packed = k.st.temp(stotal);
    for (size_t i = 0; i < p; ++i)
      typePack(*st[i], from + sdispls[i], static_cast<size_t>(sendcounts[i]), packed + sd[i]);
    sb = packed;
    char* landing = k.st.temp(rtotal);
    rb = landing;
    std::vector<Type> lays(p);  // what unpacking needs of each receive type
    for (size_t i = 0; i < p; ++i) {
      lays[i].blocks = rt[i]->blocks;
      lays[i].extent = rt[i]->extent;
    }
    std::vector<size_t> counts(recvcounts, recvcounts + p);
    std::vector<long> at(rdispls, rdispls + p);
    char* user = static_cast<char*>(recvbuf);
    k.st.onFinish([lays = std::move(lays), counts = std::move(counts), at = std::move(at),
                   landing, rd, rc, user](size_t) {
      for (size_t i = 0; i < lays.size(); ++i)
        typeUnpack(lays[i], landing + rd[i], rc[i], user + at[i], counts[i]);
    });
  }
  // rrt reads the arrays during the call only (gSizeArrays), so the locals are enough.
  rrt_comm_t c = k.c->rc;
  return k.done(req ? rrt_ialltoallv(sb, sc.data(), sd.data(), RRT_BYTE, rb, rc.data(), rd.data(),
                                     RRT_BYTE, c, k.reqOut())
                    : rrt_alltoallv(sb, sc.data(), sd.data(), RRT_BYTE, rb, rc.data(), rd.data(),
                                    RRT_BYTE, c));
}

}  // namespace
}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Barrier);
int PMPI_Barrier(MPI_Comm comm) { return barrier(comm, nullptr, __func__); }
RRT_MPI_WEAK_ALIAS(MPI_Ibarrier);
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) { return barrier(comm, request, __func__); }

RRT_MPI_WEAK_ALIAS(MPI_Bcast);
int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast(buffer, count, datatype, root, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ibcast);
int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request) {
  return bcast(buffer, count, datatype, root, comm, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Reduce);
int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
  return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ireduce);
int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request) {
  return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Reduce_local);
int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
  Call k(MPI_COMM_SELF, __func__, nullptr);  // no communicator: MPI_COMM_SELF's handler
  if (!k.ok()) return k.err;
  if (inPlace(inbuf)) return raise(MPI_COMM_SELF, MPI_ERR_BUFFER, __func__);
  Red r;
  if (!resolve(k, datatype, op, count, &r)) return k.err;
  const size_t n = static_cast<size_t>(count);
  RrtBuf s = redIn(k.st, r, inbuf, n);
  RrtBuf d = redOut(k.st, r, inoutbuf, n, true);
  return k.done(rrt_reduce_local(s.ptr, d.ptr, s.count, s.type, r.op->rop));
}

RRT_MPI_WEAK_ALIAS(MPI_Allreduce);
int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
  return allred(AllRed::All, sendbuf, recvbuf, count, datatype, op, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Iallreduce);
int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return allred(AllRed::All, sendbuf, recvbuf, count, datatype, op, comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Scan);
int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
  return allred(AllRed::Scan, sendbuf, recvbuf, count, datatype, op, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Iscan);
int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
  return allred(AllRed::Scan, sendbuf, recvbuf, count, datatype, op, comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Exscan);
int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  return allred(AllRed::Exscan, sendbuf, recvbuf, count, datatype, op, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Iexscan);
int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
  return allred(AllRed::Exscan, sendbuf, recvbuf, count, datatype, op, comm, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Reduce_scatter_block);
int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduceScatterBlock(sendbuf, recvbuf, recvcount, datatype, op, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ireduce_scatter_block);
int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request) {
  return reduceScatterBlock(sendbuf, recvbuf, recvcount, datatype, op, comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Reduce_scatter);
int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduceScatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ireduce_scatter);
int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return reduceScatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Gather);
int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return fixed(Fixed::Gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
               comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Igather);
int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  return fixed(Fixed::Gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
               comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Scatter);
int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return fixed(Fixed::Scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
               comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Iscatter);
int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  return fixed(Fixed::Scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
               comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Allgather);
int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return fixed(Fixed::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0,
               comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Iallgather);
int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return fixed(Fixed::Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0,
               comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Alltoall);
int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return fixed(Fixed::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0,
               comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ialltoall);
int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return fixed(Fixed::Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0,
               comm, request, __func__);
}

RRT_MPI_WEAK_ALIAS(MPI_Gatherv);
int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  return gatherv(false, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                 comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Igatherv);
int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  return gatherv(false, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                 comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Allgatherv);
int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
  return gatherv(true, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0,
                 comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Iallgatherv);
int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request) {
  return gatherv(true, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, 0,
                 comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Scatterv);
int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Iscatterv);
int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                  request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Alltoallv);
int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ialltoallv);
int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Alltoallw);
int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ialltoallw);
int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
  return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, comm, request, __func__);
}

}  // extern "C"
