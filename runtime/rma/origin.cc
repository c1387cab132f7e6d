// The origin side of one-sided operations: an operation is an internal request ("op") whose
// parts are the receive of the target's answer (posted first, straight into the result buffer),
// the header message (payload inline when small) and, for a larger payload, a data message
// (rendezvous: zero-copy into the target's window). The op completes when every part has; the
// window's per-target count of ops in flight is what flush waits for. Large contiguous puts
// and gets may leave by the direct path instead (direct.cc).
#include <cstring>

#include "runtime/core/log.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"
#include "runtime/rma/window.h"

namespace rrt::rma {
namespace {

using proto::wire::RmaAck;
using proto::wire::RmaHeader;
using proto::wire::RmaOp;

// An op's request: peer = target rank, bytes = the answer's expected length, rndvMode = 1 when
// the answer is data (else an RmaAck, received into remoteAddr), remaining = parts in flight,
// onCompleteArg = the window (onComplete itself stays unset), internal = no user handle.
constexpr uint8_t kAnswerData = 1;

void account(core::Request* op, const core::Request* part, bool answer) {
  int err = part->status.error;
  if (answer && err == RRT_SUCCESS) {
    if (op->rndvMode == kAnswerData) {
      if (part->status.bytes != op->bytes) err = RRT_ERR_RMA_RANGE;  // the target refused
    } else {
      RmaAck a;
      std::memcpy(&a, &op->remoteAddr, sizeof a);
      err = a.status;
    }
  }
  if (err != RRT_SUCCESS && op->status.error == RRT_SUCCESS) op->status.error = err;
}

void partDone(core::Request* part, void* arg) {
  auto* op = static_cast<core::Request*>(arg);
  account(op, part, part->kind == core::ReqKind::Recv);
  if (--op->remaining == 0) opDone(op);
}

void track(core::Request* op, core::Request* part) {
  if (part->complete) {
    account(op, part, part->kind == core::ReqKind::Recv);
    core::requestRelease(part);
    return;
  }
  ++op->remaining;
  part->onComplete = partDone;
  part->onCompleteArg = op;
  part->userFreed = true;
}

uint32_t nextId(Window& w) {
  uint32_t id = w.nextId++;
  if (w.nextId > 0x1fffffffu) w.nextId = 1;
  return id;
}

}  // namespace

void opDone(core::Request* op) {
  auto* w = static_cast<Window*>(op->onCompleteArg);
  --w->inFlight[static_cast<size_t>(op->peer)];
  --w->inFlightTotal;
  if (op->internal) {
    if (op->status.error != RRT_SUCCESS && w->opError == Status::Ok)
      w->opError = static_cast<Status>(op->status.error);
    op->userFreed = true;
  }
  core::requestComplete(op, Status::Ok);
}

Status issue(Window& w, const OpArgs& a, core::Request** request) {
  proto::Comm& c = *w.comm;
  if (a.target == RRT_PROC_NULL) {
    if (request) {
      core::Request* r = core::requestAlloc(core::ReqKind::Send);
      r->comm = &c;
      r->status.source = RRT_PROC_NULL;
      r->status.tag = RRT_ANY_TAG;
      core::requestComplete(r, Status::Ok);
      *request = r;
    }
    return Status::Ok;
  }
  if (a.bytes >= w.directMin && (a.op == RmaOp::Put || a.op == RmaOp::Get) &&
      directIssue(w, a, request))
    return Status::Ok;
  const uint32_t id = nextId(w);
  const bool dataAnswer = a.op == RmaOp::Get || a.op == RmaOp::GetAcc || a.op == RmaOp::Cas;
  core::Request* op = core::requestAlloc(core::ReqKind::Send);
  op->internal = request == nullptr;
  op->comm = &c;
  op->peer = a.target;
  op->bytes = dataAnswer ? a.bytes : sizeof(RmaAck);
  op->rndvMode = dataAnswer ? kAnswerData : 0;
  op->remoteAddr = 0;
  op->onCompleteArg = &w;
  op->status.source = a.target;
  op->status.tag = RRT_ANY_TAG;
  op->status.bytes = a.bytes;
  // Parts complete only through progress, which cannot run before this returns, so the op is
  // never finished while being assembled; remaining starts at one for the assembly itself.
  op->remaining = 1;
  ++w.inFlight[static_cast<size_t>(a.target)];
  ++w.inFlightTotal;

  core::Request* part = nullptr;
  Status st = dataAnswer ? proto::irecv(c, c.ctx, a.result, a.bytes, a.target,
                                        proto::wire::rmaReplyTag(id), &part)
                         : proto::irecv(c, c.ctx, &op->remoteAddr, sizeof(RmaAck), a.target,
                                        proto::wire::rmaReplyTag(id), &part);
  if (st == Status::Ok) {
    track(op, part);
    RmaHeader h{};
    h.op = static_cast<uint8_t>(a.op);
    h.type = a.type;
    h.rop = a.rop;
    h.id = id;
    h.bytes = a.bytes;
    h.disp = a.disp;
    const bool inl = a.originBytes <= proto::wire::kRmaInlineMax;
    h.inlined = inl;
    alignas(8) char msg[sizeof h + proto::wire::kRmaInlineMax];
    std::memcpy(msg, &h, sizeof h);
    size_t len = sizeof h;
    if (inl && a.originBytes) {
      std::memcpy(msg + sizeof h, a.origin, a.originBytes);
      len += a.originBytes;
    }
    st = sendCopy(w, a.target, proto::wire::kRmaHeaderTag, msg, len);
    if (st == Status::Ok && !inl) {
      st = proto::isend(c, c.ctx, a.origin, a.originBytes, a.target, proto::wire::rmaDataTag(id),
                        0, &part);
      if (st == Status::Ok) track(op, part);
    }
  }
  if (st != Status::Ok && op->status.error == RRT_SUCCESS) op->status.error = toC(st);
  if (request) *request = op;
  // The answer's receive may be left posted after a failure; it then completes with the peer's
  // failure (or never, if the peer lives but never got the header: a failed local send).
  if (--op->remaining == 0) opDone(op);
  return Status::Ok;
}

Status control(Window& w, RmaOp op, int target, uint8_t lockType, bool answered,
               core::Request** answer, RmaAck* ack) {
  proto::Comm& c = *w.comm;
  const uint32_t id = nextId(w);
  if (answered)
    RRT_TRY(proto::irecv(c, c.ctx, ack, sizeof *ack, target, proto::wire::rmaReplyTag(id),
                         answer));
  RmaHeader h{};
  h.op = static_cast<uint8_t>(op);
  h.lockType = lockType;
  h.id = id;
  h.inlined = 1;
  return sendCopy(w, target, proto::wire::kRmaHeaderTag, &h, sizeof h);
}

}  // namespace rrt::rma
