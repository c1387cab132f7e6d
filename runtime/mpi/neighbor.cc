// Neighbourhood collectives (MPI 3.1 section 7.6) on communicators with a topology: each is one
// rrt_neighbor_alltoallv over the topology's neighbour lists, its blocks as bytes.
//   - Cartesian: for each dimension, the source then the destination of MPI_Cart_shift(d, 1),
//     as both the sources and the destinations; MPI_PROC_NULL beyond a non-periodic edge keeps
//     its slot and moves nothing.
//   - graph (MPI_Graph_create): MPI_Graph_neighbors of the rank, both ways.
//   - distributed graph: the sources and destinations as the program gave them.
// All five are reduced to the alltoallw form, one (datatype, count, byte displacement) per
// block. A side whose blocks are all dense goes straight between the program's buffers; else
// its blocks are packed into one temporary at running offsets (received ones unpacked when the
// call completes, from copies of the layouts: a datatype may be freed before then).
#include <utility>
#include <vector>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

static_assert(MPI_PROC_NULL == RRT_PROC_NULL, "Cartesian edges go to rrt as they are");

namespace rrt::mpi {
namespace {

struct Part {
  const Type* t;
  size_t count;
  long disp;  // bytes from the buffer
};

// Cartesian sends go out +1 first in each dimension (the lists handed to rrt swap each pair):
// rrt matches the k-th block to a rank with its k-th receive from us, and where one rank is
// both neighbours of a dimension (periodic, size 1 or 2) that puts the block sent towards +1
// in the slot the receiver has for its -1 neighbour, as on a larger grid (MPICH's
// coll/ring_neighbor_alltoall checks it). Elsewhere the two ranks differ and order is moot.
// The neighbour lists of c's topology in MPI's buffer order (false: it has none).
bool neighbours(MPI_Comm comm, const Comm& c, std::vector<int>* sources, std::vector<int>* dests) {
  const Topo& t = c.topo;
  switch (t.kind) {
    case MPI_CART:
      for (int d = 0; d < static_cast<int>(t.dims.size()); ++d) {
        int src, dst;
        PMPI_Cart_shift(comm, d, 1, &src, &dst);
        sources->push_back(src);
        sources->push_back(dst);
      }
      *dests = *sources;
      break;
    case MPI_GRAPH: {
      const int first = c.rank > 0 ? t.index[c.rank - 1] : 0;
      sources->assign(t.edges.begin() + first, t.edges.begin() + t.index[c.rank]);
      *dests = *sources;
      break;
    }
    case MPI_DIST_GRAPH:
      *sources = t.sources;
      *dests = t.dests;
      break;
    default: return false;
  }
  return true;
}

// One side's blocks as rrt sees them: byte counts and displacements from the pointer.
struct Side {
  void* ptr = nullptr;
  std::vector<size_t> counts, displs;
};
Side stageSide(Stage& st, const std::vector<Part>& parts, const void* buf, bool out) {
  Side s;
  const size_t n = parts.size();
  s.counts.resize(n);
  s.displs.resize(n);
  bool dense = true;
  for (size_t i = 0; i < n; ++i) {
    const Type& t = *parts[i].t;
    s.counts[i] = parts[i].count * t.size;
    const long at = parts[i].disp + (t.predefined ? 0 : typeDataOffset(t));
    dense = dense && (t.predefined || typeDense(t)) && at >= 0;
    s.displs[i] = static_cast<size_t>(at);
  }
  if (dense) {
    s.ptr = const_cast<void*>(buf);
    return s;
  }
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    s.displs[i] = total;
    total += s.counts[i];
  }
  char* tmp = st.temp(total);
  s.ptr = tmp;
  if (!out) {
    for (size_t i = 0; i < n; ++i)
      typePack(*parts[i].t, static_cast<const char*>(buf) + parts[i].disp, parts[i].count,
               tmp + s.displs[i]);
    return s;
  }
  std::vector<Type> lays(n);
  std::vector<size_t> counts(n);
  std::vector<long> at(n);
  for (size_t i = 0; i < n; ++i) {
    lays[i].blocks = parts[i].t->blocks;
    lays[i].extent = parts[i].t->extent;
    counts[i] = parts[i].count;
    at[i] = parts[i].disp;
  }
  char* user = static_cast<char*>(const_cast<void*>(buf));
  st.onFinish([lays = std::move(lays), counts = std::move(counts), at = std::move(at), tmp,
               off = s.displs, bytes = s.counts, user](size_t) {
    for (size_t i = 0; i < lays.size(); ++i)
      typeUnpack(lays[i], tmp + off[i], bytes[i], user + at[i], counts[i]);
  });
  return s;
}

// A neighbourhood collective in the alltoallw form: blockOf(send, i, &part) gives the i-th block
// of the send (true) or receive side, returning an MPI error code (MPI_SUCCESS when valid).
template <class BlockOf>
int exchange(MPI_Comm comm, const void* sendbuf, void* recvbuf, BlockOf blockOf,
             MPI_Request* req, const char* fn) {
  int err;
  Comm* c = commCheck(comm, fn, &err);
  if (!c) return err;
  if (c->inter) return raise(comm, MPI_ERR_COMM, fn);
  std::vector<int> sources, dests;
  if (!neighbours(comm, *c, &sources, &dests)) return raise(comm, MPI_ERR_TOPOLOGY, fn);
  std::vector<Part> in(dests.size()), out(sources.size());
  for (size_t i = 0; i < in.size(); ++i)
    if (int e = blockOf(true, i, &in[i])) return raise(comm, e, fn);
  for (size_t i = 0; i < out.size(); ++i)
    if (int e = blockOf(false, i, &out[i])) return raise(comm, e, fn);
  // An MPI_PROC_NULL neighbour's slot moves nothing: not packed, and not unpacked over.
  for (size_t i = 0; i < in.size(); ++i)
    if (dests[i] == MPI_PROC_NULL) in[i].count = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (sources[i] == MPI_PROC_NULL) out[i].count = 0;
  if (c->topo.kind == MPI_CART)  // +1 first: see neighbours()
    for (size_t i = 0; i + 1 < dests.size(); i += 2) {
      std::swap(dests[i], dests[i + 1]);
      std::swap(in[i], in[i + 1]);
    }
  Stage st;
  const Side s = stageSide(st, in, sendbuf, false);
  const Side d = stageSide(st, out, recvbuf, true);
  rrt_request_t rr = RRT_REQUEST_NULL;
  const int rc =
      req ? rrt_ineighbor_alltoallv(s.ptr, s.counts.data(), s.displs.data(), d.ptr,
                                    d.counts.data(), d.displs.data(), RRT_BYTE, sources.size(),
                                    sources.data(), dests.size(), dests.data(), c->rc, &rr)
          : rrt_neighbor_alltoallv(s.ptr, s.counts.data(), s.displs.data(), d.ptr,
                                   d.counts.data(), d.displs.data(), RRT_BYTE, sources.size(),
                                   sources.data(), dests.size(), dests.data(), c->rc);
  if (rc != RRT_SUCCESS) return check(comm, rc, fn);
  if (req) *req = requestMake(rr, comm, std::move(st), false);
  else st.finish();
  return MPI_SUCCESS;
}

// The datatype, committed (else MPI_ERR_TYPE), and count (else MPI_ERR_COUNT) of a block.
int block(MPI_Datatype dt, int count, long disp, Part* b) {
  const Type* t = typeGet(dt);
  if (t == nullptr || !t->committed) return MPI_ERR_TYPE;
  if (count < 0) return MPI_ERR_COUNT;
  *b = Part{t, static_cast<size_t>(count), disp};
  return MPI_SUCCESS;
}
long extentOf(MPI_Datatype dt) {
  const Type* t = typeGet(dt);
  return t ? t->extent : 0;
}

// allgather(v): the one send block to every destination; receive blocks at recvcount * i or,
// v, at displs[i] (extents of recvtype).
int allgather(bool v, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
              int recvcount, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
              MPI_Comm comm, MPI_Request* req, const char* fn) {
  const long rext = extentOf(recvtype);
  return exchange(comm, sendbuf, recvbuf, [&](bool send, size_t i, Part* b) {
    if (send) return block(sendtype, sendcount, 0, b);
    if (!v) return block(recvtype, recvcount, static_cast<long>(i) * recvcount * rext, b);
    if (!recvcounts || !displs) return MPI_ERR_ARG;
    return block(recvtype, recvcounts[i], displs[i] * rext, b);
  }, req, fn);
}

// alltoall(v): block i of each side at count * i or, v, at displs[i] (extents of its datatype).
int alltoall(bool v, const void* sendbuf, int sendcount, const int* sendcounts, const int* sdispls,
             MPI_Datatype sendtype, void* recvbuf, int recvcount, const int* recvcounts,
             const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* req,
             const char* fn) {
  const long sext = extentOf(sendtype), rext = extentOf(recvtype);
  return exchange(comm, sendbuf, recvbuf, [&](bool send, size_t i, Part* b) {
    const MPI_Datatype dt = send ? sendtype : recvtype;
    const long ext = send ? sext : rext;
    const int* counts = send ? sendcounts : recvcounts;
    const int* displs = send ? sdispls : rdispls;
    const int count = send ? sendcount : recvcount;
    if (!v) return block(dt, count, static_cast<long>(i) * count * ext, b);
    if (!counts || !displs) return MPI_ERR_ARG;
    return block(dt, counts[i], displs[i] * ext, b);
  }, req, fn);
}

int alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
              MPI_Request* req, const char* fn) {
  return exchange(comm, sendbuf, recvbuf, [&](bool send, size_t i, Part* b) {
    if (send && (!sendcounts || !sdispls || !sendtypes)) return MPI_ERR_ARG;
    if (!send && (!recvcounts || !rdispls || !recvtypes)) return MPI_ERR_ARG;
    if (send) return block(sendtypes[i], sendcounts[i], sdispls[i], b);
    return block(recvtypes[i], recvcounts[i], rdispls[i], b);
  }, req, fn);
}

}  // namespace
}  // namespace rrt::mpi

using namespace rrt::mpi;

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Neighbor_allgather);
int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                   recvtype, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ineighbor_allgather);
int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return allgather(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                   recvtype, comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Neighbor_allgatherv);
int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather(true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                   comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ineighbor_allgatherv);
int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return allgather(true, sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                   comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Neighbor_alltoall);
int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall(false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount,
                  nullptr, nullptr, recvtype, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ineighbor_alltoall);
int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return alltoall(false, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount,
                  nullptr, nullptr, recvtype, comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Neighbor_alltoallv);
int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall(true, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts, rdispls,
                  recvtype, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ineighbor_alltoallv);
int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return alltoall(true, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts, rdispls,
                  recvtype, comm, request, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Neighbor_alltoallw);
int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm) {
  return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, comm, nullptr, __func__);
}
RRT_MPI_WEAK_ALIAS(MPI_Ineighbor_alltoallw);
int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request* request) {
  return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                   recvtypes, comm, request, __func__);
}

}  // extern "C"
