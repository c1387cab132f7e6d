#include "runtime/proto/p2p.h"

#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/rndv.h"
#include "runtime/proto/engine.h"

namespace rrt::proto {

using core::Request;

namespace {

// A send from device memory: small ones are staged whole (bounce); large ones go by CUDA IPC
// to another process on this node, by GPUDirect RDMA where the peer's transport registers
// device memory, else by the pipelined rendezvous (gpu/rndv.h), with no staging of the whole
// message.
Status startDeviceSend(Request* r) {
  const wireup::JobInfo& job = engine().job();
  const int me = engine().rank();
  const bool sameNode = static_cast<size_t>(r->peer) < job.nodeOf.size() &&
                        static_cast<size_t>(me) < job.nodeOf.size() &&
                        job.nodeOf[r->peer] == job.nodeOf[me];
  const Peer* p = engine().peer(r->peer);
  const bool gdr = p->tx && (p->tx->caps().zcopyMemTypes &
                             memory::memTypeBit(memory::MemType::Cuda));
  gpu::PointerInfo info;
  switch (gpu::sendProto(r->buf, r->bytes, sameNode, r->peer == me, gdr, &info)) {
    case gpu::Proto::Host:
      return Status::Ok;  // the memory-type cache was stale: host memory after all
    case gpu::Proto::Bounce:
      return gpu::stageSend(r);  // a host copy, freed when the send completes
    case gpu::Proto::Ipc: {
      gpu::IpcRef ref;
      if (gpu::ipcExport(r->buf, r->bytes, info, &ref) == Status::Ok) {
        RRT_TRY(gpu::ipcSendStart(r, ref));
      }
      r->memType = memory::MemType::Cuda;  // not exported: the pipelined rendezvous
      return Status::Ok;
    }
    default:  // GdrRdma or Pipelined: Engine::startSend picks the rendezvous mode
      r->memType = memory::MemType::Cuda;
      return Status::Ok;
  }
}

}  // namespace

Status isend(Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dst, int tag,
             uint8_t sendFlags, Request** out) {
  // Fast path: a small standard-mode send that the transport copies out right now completes
  // in the call, with no protocol state (what rrt_send does; here the caller still gets a
  // request, already complete, that names the message should it be cancelled).
  const bool device = gpu::isDevice(buf, bytes);
  uint32_t seq;
  if (!sendFlags && dst != RRT_PROC_NULL && !device &&
      engine().trySendInline(comm, ctx, buf, bytes, dst, tag, &seq) == Status::Ok) {
    Request* r = core::requestAlloc(core::ReqKind::Send);
    r->ctx = ctx;
    r->tag = tag;
    r->peer = comm.worldRank(dst);
    r->seq = seq;
    r->comm = &comm;
    commHold(comm, r);
    r->buf = const_cast<void*>(buf);
    r->bytes = bytes;
    r->status.bytes = bytes;
    r->complete = true;
    *out = r;
    return Status::Ok;
  }
  Request* r = core::requestAlloc(core::ReqKind::Send);
  r->ctx = ctx;
  r->tag = tag;
  r->comm = &comm;
  commHold(comm, r);
  r->flags = sendFlags;
  r->buf = const_cast<void*>(buf);
  r->bytes = bytes;
  if (dst == RRT_PROC_NULL) {
    r->status.source = RRT_PROC_NULL;
    r->status.tag = RRT_ANY_TAG;
    core::requestComplete(r, Status::Ok);
    *out = r;
    return Status::Ok;
  }
  r->peer = comm.worldRank(dst);
  if (__builtin_expect(device, 0)) {
    Status st = startDeviceSend(r);
    if (st != Status::Ok) {
      core::requestRelease(r);
      return st;
    }
  }
  Status st = engine().startSend(r);
  if (st != Status::Ok) {
    (void)gpu::unstage(r, st);
    gpu::rndvEnd(r);
    core::requestRelease(r);
    return st;
  }
  *out = r;
  return Status::Ok;
}

Status irecv(Comm& comm, uint32_t ctx, void* buf, size_t bytes, int src, int tag, Request** out) {
  Request* r = core::requestAlloc(core::ReqKind::Recv);
  r->ctx = ctx;
  r->tag = tag;
  r->srcRank = src;
  r->comm = &comm;
  commHold(comm, r);
  r->buf = buf;
  r->bytes = bytes;
  *out = r;
  if (src == RRT_PROC_NULL) {
    r->status.source = RRT_PROC_NULL;
    r->status.tag = RRT_ANY_TAG;
    core::requestComplete(r, Status::Ok);
    return Status::Ok;
  }
  if (src != RRT_ANY_SOURCE) {
    Peer* p = engine().peer(comm.worldRank(src));
    if (p->failed) {
      core::requestRelease(r);
      return Status::ErrProcFailed;
    }
  }
  if (__builtin_expect(gpu::isDevice(buf, bytes), 0) && gpu::recvIsDevice(buf, bytes)) {
    // Device memory: received into a host buffer, copied to the device before completion (by
    // one copy, chunk by chunk as a pipelined rendezvous arrives, or not at all when an IPC
    // rendezvous copies straight into the device buffer).
    Status st = gpu::stageRecv(r);
    if (st != Status::Ok) {
      core::requestRelease(r);
      return st;
    }
  }
  engine().startRecv(r);
  return Status::Ok;
}

Status iprobe(Comm& comm, uint32_t ctx, int src, int tag, bool* found, rrt_status_t* status) {
  *found = false;
  if (src == RRT_PROC_NULL) {
    *found = true;
    if (status) *status = rrt_status_t{RRT_PROC_NULL, RRT_ANY_TAG, RRT_SUCCESS, 0, 0};
    return Status::Ok;
  }
  Request* u = engine().matcher().queues(ctx).findUnexpected(src, tag, false);
  if (!u) return Status::Ok;
  *found = true;
  if (status) *status = rrt_status_t{u->srcRank, u->tag, RRT_SUCCESS, 0, u->remaining};
  return Status::Ok;
}

Status improbe(Comm& comm, uint32_t ctx, int src, int tag, Request** msg, rrt_status_t* status) {
  Request* u = engine().matcher().queues(ctx).findUnexpected(src, tag, true);
  *msg = u;
  if (!u) return Status::Ok;
  u->flags |= core::kMatchedProbe;
  u->comm = &comm;
  commHold(comm, u);  // until imrecv releases u: the message outlives a comm_free in between
  if (status) *status = rrt_status_t{u->srcRank, u->tag, RRT_SUCCESS, 0, u->remaining};
  return Status::Ok;
}

Status imrecv(Request* u, void* buf, size_t bytes, Request** out) {
  Request* r = core::requestAlloc(core::ReqKind::Recv);
  r->ctx = u->ctx;
  r->tag = u->tag;
  r->srcRank = u->srcRank;
  r->comm = u->comm;
  commHold(*u->comm, r);
  r->buf = buf;
  r->bytes = bytes;
  if (__builtin_expect(gpu::isDevice(buf, bytes), 0) && gpu::recvIsDevice(buf, bytes)) {
    Status st = gpu::stageRecv(r);  // as irecv: through a host buffer
    if (st != Status::Ok) {
      core::requestRelease(r);
      return st;
    }
  }
  u->flags &= static_cast<uint8_t>(~core::kMatchedProbe);
  *out = r;
  engine().receiveUnexpected(r, u);
  return Status::Ok;
}

Status cancel(Request* r) {
  if (r->kind == core::ReqKind::Send) return engine().cancelSend(r);
  if (r->kind != core::ReqKind::Recv || r->complete) return Status::Ok;
  if (engine().matcher().queues(r->ctx).unpost(r)) {
    r->status.cancelled = 1;
    if (r->gpuStage) (void)gpu::unstage(r, Status::Ok);
    core::requestComplete(r, Status::Ok);
  }
  return Status::Ok;
}

}  // namespace rrt::proto

namespace rrt::proto {

Status waitRelease(Request* r, rrt_status_t* status) {
  if (!r->complete) {
    Status st = core::waitFor([r] { return r->complete; });
    if (st != Status::Ok) return st;  // timed out: r stays owned by rrt
  }
  if (status) *status = r->status;
  Status s = static_cast<Status>(r->status.error);
  core::requestRelease(r);
  return s;
}

}  // namespace rrt::proto
