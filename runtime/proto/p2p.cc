#include "runtime/proto/p2p.h"

#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"
#include "runtime/proto/engine.h"

namespace rrt::proto {

using core::Request;

Status isend(Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dst, int tag,
             uint8_t sendFlags, Request** out) {
  // Fast path: a small standard-mode send that the transport copies out right now completes
  // in the call, with no protocol state (what rrt_send does; here the caller still gets a
  // request, already complete).
  const bool device = gpu::isDevice(buf, bytes);
  if (!sendFlags && dst != RRT_PROC_NULL && !device &&
      engine().trySendInline(comm, ctx, buf, bytes, dst, tag) == Status::Ok) {
    Request* r = core::requestAlloc(core::ReqKind::Send);
    r->comm = &comm;
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
    // Device memory: sent from a host copy (runtime/gpu staging), freed when the send completes.
    Status st = gpu::stageSend(r);
    if (st != Status::Ok) {
      core::requestRelease(r);
      return st;
    }
  }
  Status st = engine().startSend(r);
  if (st != Status::Ok) {
    (void)gpu::unstage(r, st);
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
  if (__builtin_expect(gpu::isDevice(buf, bytes), 0)) {
    // Device memory: received into a host buffer, copied to the device before completion.
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

Status cancel(Request* r) {
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
