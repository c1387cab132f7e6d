// Cancelling sends. MPI lets a send be cancelled until the receiver has matched it: either the
// cancel succeeds and the receiver never sees the message, or the send completes normally; a
// wait after the cancel always returns.
//
// Sender: a send whose opening message has not left (still on the peer's pending list) is
// dropped here and completes cancelled. Otherwise a Cancel naming (context, sequence number)
// goes to the receiver once the whole message is out (never between an eager message and its
// fragments), behind the message itself on the ordered transport. A standard eager send that
// had completed completes again when the answer comes; an ssend or rendezvous keeps waiting for
// its Ack / CTS / FIN unless the answer says cancelled. Sends already moving data after a
// match (put, Data, device pipeline) are not cancelled.
//
// Receiver: the message is looked up among the unexpected ones of that peer; found and whole,
// it is dropped (eager payload back to the pool, RTS forgotten: its data is never read) and the
// answer says cancelled; else the answer says it matched.
#include <cstring>

#include "runtime/core/buffer_pool.h"
#include "runtime/core/log.h"
#include "runtime/gpu/rndv.h"
#include "runtime/proto/engine.h"

namespace rrt::proto {

using core::Request;

Status Engine::cancelSend(Request* r) {
  if (r->peer < 0 || (r->flags & kCancelAsked) || r->status.cancelled ||
      r->status.error != RRT_SUCCESS)
    return Status::Ok;  // RRT_PROC_NULL, asked before, or finished with an error
  Peer& p = peers_[static_cast<size_t>(r->peer)];
  const auto phase = static_cast<Phase>(r->phase);
  if (r->complete) {
    // Only a standard eager send completes before the receiver matched it.
    if ((r->flags & core::kSendSync) || (phase != Phase::None && phase != Phase::EagerSend) ||
        p.failed || !p.tx)
      return Status::Ok;
    r->complete = false;
    r->phase = static_cast<uint8_t>(Phase::CancelWait);
    r->flags |= kCancelAsked;
    sendCancel(r);
    return Status::Ok;
  }
  switch (phase) {
    case Phase::EagerSend:
      if (r->flags & kHeaderSent) {
        r->flags |= kCancelAsked;  // fragments queued: the Cancel follows the last one
        return Status::Ok;
      }
      [[fallthrough]];
    case Phase::RtsSend:
      // Nothing left yet: the receiver never hears of it (its sequence number stays unused).
      p.pending.remove(r);
      r->status.cancelled = 1;
      finishSend(r, Status::Ok);
      return Status::Ok;
    case Phase::WaitAck:
    case Phase::WaitCts:
    case Phase::WaitFin:
      r->flags |= kCancelAsked;
      sendCancel(r);
      return Status::Ok;
    default:
      return Status::Ok;  // matched: moving data, completes normally
  }
}

void Engine::sendCancel(Request* r) {
  if (!r->id) r->id = ids_.add(r);  // the answer names it; a failing peer ends it
  wire::CancelHeader c{r->ctx, r->seq, r->id};
  sendCtl(r->peer, wire::kCancel, &c, sizeof c);
}

void Engine::onCancel(int src, const uint8_t* data, size_t len) {
  wire::CancelHeader c;
  if (len < sizeof c) {
    RRT_WARN("short Cancel (%zu bytes) from rank %d dropped", len, src);
    return;
  }
  memcpy(&c, data, sizeof c);
  wire::CancelAckHeader a{};
  a.sreq = c.sreq;
  Peer& p = peers_[static_cast<size_t>(src)];
  if (Matcher::validContext(c.ctx)) {
    MatchQueues& q = matcher_.queues(c.ctx);
    for (Request* u = q.unexpected().front(); u; u = q.unexpected().next(u)) {
      if (u->peer != src || u->seq != c.seq) continue;
      if (u == p.rxEager) break;  // not whole yet (cannot happen in order): leave it be
      q.unexpected().remove(u);
      if (u->phase == static_cast<uint8_t>(Phase::UnexpEager)) {
        core::bufferPut(u->buf, u->bytes);
      } else {
        gpu::rndvEnd(u);  // an IPC RTS's held mapping
      }
      core::requestRelease(u);
      a.cancelled = 1;
      break;
    }
  }
  sendCtl(src, wire::kCancelAck, &a, sizeof a);
}

void Engine::onCancelAck(int src, const uint8_t* data, size_t len) {
  wire::CancelAckHeader a;
  if (len < sizeof a) {
    RRT_WARN("short CancelAck (%zu bytes) from rank %d dropped", len, src);
    return;
  }
  memcpy(&a, data, sizeof a);
  Request* r = ids_.find(a.sreq);
  if (!r || r->peer != src || r->kind != core::ReqKind::Send || !(r->flags & kCancelAsked)) {
    // The send completed meanwhile (its Ack or FIN came first: not cancelled), or a bad id.
    RRT_DEBUG("CancelAck for a finished or unknown request from rank %d", src);
    return;
  }
  if (a.cancelled) {
    r->status.cancelled = 1;
    finishSend(r, Status::Ok);  // releases its registration and device state too
    return;
  }
  // Matched: an eager send is done; the others go on to their Ack / CTS / FIN.
  if (r->phase == static_cast<uint8_t>(Phase::CancelWait)) finishSend(r, Status::Ok);
}

}  // namespace rrt::proto
