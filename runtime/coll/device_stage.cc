#include "runtime/coll/device_stage.h"

#include "runtime/core/log.h"
#include "runtime/gpu/gpu.h"

namespace rrt::coll {

namespace {

struct Mirror {
  void* user = nullptr;
  void* host = nullptr;
  size_t bytes = 0, capacity = 0;
};

struct CollStage {
  Mirror send, recv;
};

void freeMirror(Mirror& m) {
  gpu::releaseHostBuffer(m.host, m.capacity);
  m = Mirror{};
}

// Mirrors buf (bytes) when it is device memory; copies its content in.
Status mirror(const void* buf, size_t bytes, Mirror* m) {
  if (!buf || inPlace(buf) || bytes == 0 || !gpu::isDevice(buf, bytes)) return Status::Ok;
  m->user = const_cast<void*>(buf);
  m->bytes = bytes;
  m->host = gpu::hostBuffer(bytes, &m->capacity);
  if (!m->host) return Status::ErrNoMemory;
  return gpu::copy(m->host, buf, bytes);
}

}  // namespace

void extents(const CollArgs& a, int rank, int size, size_t* s, size_t* r) {
  const size_t P = static_cast<size_t>(size);
  const bool root = rank == a.root;
  const size_t me = static_cast<size_t>(rank);
  const size_t vec = a.count * a.typeSize;
  *s = *r = 0;
  switch (a.kind) {
    case CollKind::Barrier: break;
    case CollKind::Bcast: *r = vec; break;
    case CollKind::Reduce: *s = vec; *r = root ? vec : 0; break;
    case CollKind::Allreduce:
    case CollKind::Scan:
    case CollKind::Exscan: *s = vec; *r = vec; break;
    case CollKind::Allgather: *s = a.blockBytes; *r = a.blockBytes * P; break;
    case CollKind::Allgatherv:
      *s = me < a.recvBytes.size() ? a.recvBytes[me] : 0;
      *r = vectorExtent(a.recvBytes, a.recvOffs);
      break;
    case CollKind::Alltoall: *s = *r = a.blockBytes * P; break;
    case CollKind::Alltoallv:
      *s = vectorExtent(a.sendBytes, a.sendOffs);
      *r = vectorExtent(a.recvBytes, a.recvOffs);
      break;
    case CollKind::Gather: *s = a.blockBytes; *r = root ? a.blockBytes * P : 0; break;
    case CollKind::Gatherv: *s = a.blockBytes; *r = root ? vectorExtent(a.recvBytes, a.recvOffs) : 0; break;
    case CollKind::Scatter: *s = root ? a.blockBytes * P : 0; *r = a.blockBytes; break;
    case CollKind::Scatterv: *s = root ? vectorExtent(a.sendBytes, a.sendOffs) : 0; *r = a.blockBytes; break;
    case CollKind::ReduceScatter: {
      size_t total = 0;
      for (size_t b : a.recvBytes) total += b;
      *s = total;
      *r = inPlace(a.sbuf) ? total : (me < a.recvBytes.size() ? a.recvBytes[me] : 0);
      break;
    }
    case CollKind::Count: break;
  }
}

bool hasDeviceBuffer(const proto::Comm& comm, const CollArgs& a) {
  if (!gpu::enabled()) return false;
  size_t sBytes, rBytes;
  extents(a, comm.rank, comm.size, &sBytes, &rBytes);
  auto device = [](const void* buf, size_t bytes) {
    return buf && !inPlace(buf) && bytes && gpu::isDevice(buf, bytes);
  };
  return device(a.sbuf, sBytes) || device(a.rbuf, rBytes);
}

Status stageDeviceBuffers(const proto::Comm& comm, CollArgs& a, void** stage) {
  *stage = nullptr;
  size_t sBytes, rBytes;
  extents(a, comm.rank, comm.size, &sBytes, &rBytes);
  CollStage g;
  Status rc = mirror(a.sbuf, sBytes, &g.send);
  if (rc == Status::Ok) rc = mirror(a.rbuf, rBytes, &g.recv);
  if (rc != Status::Ok) {
    freeMirror(g.send);
    freeMirror(g.recv);
    return rc;
  }
  if (!g.send.host && !g.recv.host) return Status::Ok;
  if (g.send.host) a.sbuf = g.send.host;
  if (g.recv.host) a.rbuf = g.recv.host;
  *stage = new CollStage(g);
  return Status::Ok;
}

Status unstageDeviceBuffers(void* stage, Status s) {
  CollStage* g = static_cast<CollStage*>(stage);
  if (!g) return s;
  Status rc = Status::Ok;
  if (s == Status::Ok && g->recv.host) rc = gpu::copy(g->recv.user, g->recv.host, g->recv.bytes);
  freeMirror(g->send);
  freeMirror(g->recv);
  delete g;
  if (rc != Status::Ok) RRT_WARN("collective: copy of the result to device memory failed: %s", statusName(rc));
  return s == Status::Ok ? rc : s;
}

}  // namespace rrt::coll

namespace rrt::coll {

bool runsOnDevice(const proto::Comm& comm, CollArgs& a) {
  if (a.kind != CollKind::Allreduce && a.kind != CollKind::Reduce) return false;
  const Reducer& red = a.reducer;
  // Predefined op on a type the device kernels have (kernels.cu: no long double).
  if (!red.kernel || red.op == RRT_OP_NULL || red.baseType == RRT_LONG_DOUBLE ||
      red.baseType == RRT_LONG_DOUBLE_INT)
    return false;
  const size_t bytes = a.count * a.typeSize;
  if (bytes == 0) return false;
  // Every significant buffer on the device (a host one keeps the mirrors: simple and rare).
  const bool recvSignificant = a.kind == CollKind::Allreduce || comm.rank == a.root;
  if (!inPlace(a.sbuf) && !gpu::isDevice(a.sbuf, bytes)) return false;
  // (A reduce's non-root may pass any receive buffer; an algorithm may use it as scratch.)
  if ((recvSignificant || a.rbuf) && !gpu::isDevice(a.rbuf, bytes)) return false;
  // The kernels have this (op, type) (a build without nvcc has none: mirrors then).
  if (!gpu::deviceReduces(red.op, red.baseType)) return false;
  // One node: the messages between the ranks are device-to-device copies (CUDA IPC).
  const std::vector<uint32_t> nodes = commNodeIds(comm);
  for (uint32_t n : nodes)
    if (n != nodes[0]) return false;
  a.memType = memory::MemType::Cuda;
  return true;
}

}  // namespace rrt::coll
