// The sending side of the protocols: eager (single and fragmented), synchronous eager, and
// the sender's half of the rendezvous (RTS, then put or Data fragments after a CTS).
#include <algorithm>
#include <cstring>

#include "runtime/core/log.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/rndv.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"

namespace rrt::proto {

using core::Request;

namespace {

inline void fillMatch(wire::MatchHeader* m, const Request* r) {
  m->ctx = r->ctx;
  m->src = r->comm->rank;
  m->tag = r->tag;
  m->seq = r->seq;
}
}  // namespace

Status Engine::startSend(Request* r) {
  Peer* p = peer(r->peer);
  if (!p->tx || p->failed) return Status::ErrProcFailed;
  const PeerProto& pp = p->proto;
  // A large device buffer that is not staged (gpu::sendProto chose Ipc, GdrRdma or Pipelined):
  // always a rendezvous: Ipc when the buffer was exported; the transport's zero-copy mode when
  // it registers device memory (GPUDirect RDMA); else Copy fed by the device pipeline.
  const bool deviceRndv = __builtin_expect(r->memType == memory::MemType::Cuda, 0) && !r->gpuStage;
  if (r->bytes <= pp.eagerLimit && !deviceRndv) {
    r->phase = static_cast<uint8_t>(Phase::EagerSend);
    if (r->flags & core::kSendSync) r->id = ids_.add(r);
  } else {
    auto mode = r->bytes >= pp.zcopyThreshold ? pp.zcopyMode : wire::RndvMode::Copy;
    if (deviceRndv) {
      const bool gdr = p->tx->caps().zcopyMemTypes & memory::memTypeBit(memory::MemType::Cuda);
      mode = gpu::ipcSendRef(r) ? wire::RndvMode::Ipc
             : gdr              ? pp.zcopyMode
                                : wire::RndvMode::Copy;
    }
    r->rndvMode = static_cast<uint8_t>(mode);
    r->id = ids_.add(r);
    // Registered now for Get; for Put also a device buffer, so that one the NIC cannot reach
    // goes pipelined before the RTS commits the receiver to a put.
    if ((mode == wire::RndvMode::Get || (deviceRndv && mode == wire::RndvMode::Put)) &&
        (p->tx->caps().flags & transport::kNeedsReg)) {
      Status st = p->tx->memReg(r->buf, r->bytes, bufferMemType(r), &r->memHandle);
      if (st != Status::Ok && deviceRndv) {
        mode = wire::RndvMode::Copy;  // device memory the NIC cannot reach: pipelined
        r->rndvMode = static_cast<uint8_t>(mode);
      } else if (st != Status::Ok) {
        ids_.remove(r->id);
        return st;
      }
    }
    if (mode == wire::RndvMode::Get)
      r->rkeyLen = static_cast<uint8_t>(p->tx->rkeyPack(r->memHandle, r->rkey));
    r->phase = static_cast<uint8_t>(Phase::RtsSend);
  }
  r->seq = p->sendSeq++;
  ++p->msgsSent;
  p->bytesSent += r->bytes;
  if (!p->pending.empty()) {
    queuePending(*p, r);
    return Status::Ok;
  }
  Status st = progressSend(*p, r);
  if (st == Status::NoResource) queuePending(*p, r);
  return Status::Ok;
}

// Moves r as far as the transport allows. NoResource: call again later (r is not queued by
// this function). Anything else: r has been advanced to a waiting phase or completed.
Status Engine::progressSend(Peer& p, Request* r) {
  transport::Transport* tx = p.tx;
  const int w = r->peer;
  switch (static_cast<Phase>(r->phase)) {
    case Phase::EagerSend: {
      const bool sync = r->flags & core::kSendSync;
      if (!(r->flags & kHeaderSent)) {
        wire::EagerSyncHeader h;
        fillMatch(&h.e.m, r);
        h.e.total = r->bytes;
        h.sreq = r->id;
        const size_t hlen = sync ? sizeof(wire::EagerSyncHeader) : sizeof(wire::EagerHeader);
        const size_t first = std::min(r->bytes, p.proto.amPayload);
        Status st = tx->amSend(w, sync ? wire::kEagerSync : wire::kEager, &h, hlen, r->buf, first);
        if (st != Status::Ok) {
          if (st != Status::NoResource) finishSend(r, st);
          return st;
        }
        r->flags |= kHeaderSent;
        r->offset = first;
      }
      while (r->offset < r->bytes) {
        const size_t chunk = std::min(r->bytes - r->offset, p.proto.amPayload);
        Status st = tx->amSend(w, wire::kEagerFrag, nullptr, 0,
                               static_cast<const char*>(r->buf) + r->offset, chunk);
        if (st != Status::Ok) {
          if (st != Status::NoResource) finishSend(r, st);
          return st;
        }
        r->offset += chunk;
      }
      if (sync && !(r->flags & kAcked)) {
        r->phase = static_cast<uint8_t>(Phase::WaitAck);
        if (r->flags & kCancelAsked) sendCancel(r);  // asked while fragments were queued
      } else if (!sync && (r->flags & kCancelAsked)) {
        r->phase = static_cast<uint8_t>(Phase::CancelWait);
        sendCancel(r);
      } else {
        finishSend(r, Status::Ok);
      }
      return Status::Ok;
    }
    case Phase::RtsSend: {
      wire::RtsHeader h{};
      fillMatch(&h.m, r);
      h.sreq = r->id;
      h.size = r->bytes;
      h.addr = reinterpret_cast<uint64_t>(r->buf);
      h.mode = r->rndvMode;
      h.rkeyLen = r->rkeyLen;
      h.memType = static_cast<uint8_t>(r->memType);
      const void* ext = r->rkey;
      size_t extLen = r->rkeyLen;
      wire::IpcRts ipc;
      const bool isIpc = r->rndvMode == static_cast<uint8_t>(wire::RndvMode::Ipc);
      if (isIpc) {
        const gpu::IpcRef* ref = gpu::ipcSendRef(r);
        memcpy(ipc.handle, ref->key.handle.bytes, sizeof ipc.handle);
        ipc.base = ref->key.base;
        ipc.bufferId = ref->key.bufferId;
        ipc.allocSize = ref->allocSize;
        ipc.offset = ref->offset;
        ext = &ipc;
        extLen = sizeof ipc;
        h.rkeyLen = 0;
      }
      Status st = tx->amSend(w, wire::kRts, &h, sizeof h, ext, extLen);
      if (st != Status::Ok) {
        if (st != Status::NoResource) finishSend(r, st);
        return st;
      }
      r->phase = static_cast<uint8_t>(
          r->rndvMode == static_cast<uint8_t>(wire::RndvMode::Get) || isIpc ? Phase::WaitFin
                                                                             : Phase::WaitCts);
      return Status::Ok;
    }
    case Phase::PutSend: {
      const size_t maxChunk = std::max<size_t>(1, tx->caps().maxZcopy);
      while (r->offset < r->remaining) {
        const size_t chunk = std::min(r->remaining - r->offset, maxChunk);
        r->completion.fn = &Engine::onPutDone;
        Status st = tx->put(w, static_cast<const char*>(r->buf) + r->offset, chunk, r->memHandle,
                            r->remoteAddr + r->offset, r->rkey, r->rkeyLen, &r->completion);
        if (st == Status::NoResource) return st;
        if (st == Status::InProgress) {
          ++r->outstanding;
        } else if (st != Status::Ok) {
          // Stop issuing; the receiver waits for a FIN: it gets one that says the data failed,
          // once the puts already in flight are done (onPutDone).
          if (r->status.error == RRT_SUCCESS) r->status.error = static_cast<int>(st);
          r->remaining = r->offset;
          break;
        }
        r->offset += chunk;
      }
      if (r->outstanding == 0) {
        wire::FinHeader f{r->remoteId, r->status.error, 0};
        sendCtl(w, wire::kFin, &f, sizeof f);
        finishSend(r, static_cast<Status>(r->status.error));
      }
      return Status::Ok;
    }
    case Phase::DataSend: {
      while (r->offset < r->remaining) {
        const size_t chunk = std::min(r->remaining - r->offset, p.proto.amPayload);
        wire::DataHeader d{r->remoteId, r->offset};
        Status st = tx->amSend(w, wire::kData, &d, sizeof d,
                               static_cast<const char*>(r->buf) + r->offset, chunk);
        if (st != Status::Ok) {
          if (st != Status::NoResource) finishSend(r, st);
          return st;
        }
        r->offset += chunk;
      }
      finishSend(r, Status::Ok);
      return Status::Ok;
    }
    default:
      RRT_ERROR("internal: send request in phase %d on the pending list", r->phase);
      return Status::ErrInternal;
  }
}

void Engine::onPutDone(transport::Completion* c, Status s) {
  Request* r = reinterpret_cast<Request*>(reinterpret_cast<char*>(c) - offsetof(Request, completion));
  Engine& e = engine();
  --r->outstanding;
  if (failed(s) && r->status.error == RRT_SUCCESS) r->status.error = static_cast<int>(s);
  if (r->outstanding == 0 && r->offset == r->remaining) {
    // Also after a failed put: the receiver must not wait for a FIN that never comes (when the
    // transport itself is broken the FIN is dropped and the peer's failure ends its request).
    wire::FinHeader f{r->remoteId, r->status.error, 0};
    e.sendCtl(r->peer, wire::kFin, &f, sizeof f);
    e.finishSend(r, static_cast<Status>(r->status.error));
  }
}

void Engine::finishSend(Request* r, Status s) {
  if (r->id) {
    ids_.remove(r->id);
    r->id = 0;
  }
  if (r->memHandle) {
    Peer& p = peers_[static_cast<size_t>(r->peer)];
    if (p.tx) p.tx->memDereg(r->memHandle);
    r->memHandle = nullptr;
  }
  r->status.bytes = r->status.cancelled ? 0 : r->bytes;
  if (__builtin_expect(r->gpuOp != nullptr, 0)) {
    gpuUnwatch(r);
    gpu::rndvEnd(r);
  }
  if (__builtin_expect(r->gpuStage != nullptr, 0)) s = gpu::unstage(r, s);  // frees the staging
  core::requestComplete(r, s);
}

// ---- sender-side handlers -------------------------------------------------------------------

void Engine::onCts(int src, const uint8_t* data, size_t len) {
  wire::CtsHeader c;
  if (len < sizeof c) {
    RRT_WARN("short CTS (%zu bytes) from rank %d dropped", len, src);
    return;
  }
  memcpy(&c, data, sizeof c);
  Request* r = ids_.find(c.sreq);
  if (!r || r->kind != core::ReqKind::Send || r->peer != src ||
      (r->phase != static_cast<uint8_t>(Phase::WaitCts) &&
       r->phase != static_cast<uint8_t>(Phase::WaitFin)) ||  // Get refused: Copy instead
      c.len > r->bytes ||
      c.rkeyLen > transport::kMaxRkeyBytes || len < sizeof c + c.rkeyLen) {
    RRT_WARN("CTS for unknown or mismatched request %llx from rank %d dropped",
             static_cast<unsigned long long>(c.sreq), src);
    return;
  }
  r->remoteId = c.rreq;
  r->remaining = c.len;
  r->offset = 0;
  if (c.mode == static_cast<uint8_t>(wire::RndvMode::Put)) {
    r->remoteAddr = c.addr;
    r->rkeyLen = c.rkeyLen;
    memcpy(r->rkey, data + sizeof c, c.rkeyLen);
    r->phase = static_cast<uint8_t>(Phase::PutSend);
    // The RTS of a Put rendezvous went out unregistered: transports that need registration
    // (verbs) get the source buffer registered now, before the first put().
    Peer& pr = peers_[static_cast<size_t>(src)];
    if (!r->memHandle && (pr.tx->caps().flags & transport::kNeedsReg)) {
      Status st = pr.tx->memReg(r->buf, r->bytes, bufferMemType(r), &r->memHandle);
      if (st != Status::Ok) {
        RRT_WARN("put rendezvous to rank %d: cannot register the send buffer: %s", src,
                 statusName(st));
        wire::FinHeader f{c.rreq, static_cast<int32_t>(st), 0};  // the receiver waits for it
        sendCtl(src, wire::kFin, &f, sizeof f);
        finishSend(r, st);
        return;
      }
    }
  } else {
    r->phase = static_cast<uint8_t>(Phase::DataSend);
    if (r->memType == memory::MemType::Cuda && !r->gpuStage) {
      // A device buffer (also an IPC send the receiver turned down): Data fragments fed by the
      // pipeline of device->host chunk copies, polled from gpuActive_.
      Status st = c.len ? gpu::pipeSendStart(r, c.len, &Engine::pipeTransfer, r) : Status::Ok;
      if (st != Status::Ok || c.len == 0) {
        if (st != Status::Ok) {
          RRT_WARN("pipelined send of device memory to rank %d cannot start: %s", src,
                   statusName(st));
          wire::FinHeader f{c.rreq, static_cast<int32_t>(st), 0};
          sendCtl(src, wire::kFin, &f, sizeof f);
        }
        finishSend(r, st);
        return;
      }
      gpuWatch(r);
      stepGpu(r);
      return;
    }
  }
  Peer& p = peers_[static_cast<size_t>(src)];
  if (!p.pending.empty()) {
    queuePending(p, r);
    return;
  }
  if (progressSend(p, r) == Status::NoResource) queuePending(p, r);
}

void Engine::onFin(int src, const uint8_t* data, size_t len) {
  wire::FinHeader f;
  if (len < sizeof f) return;
  memcpy(&f, data, sizeof f);
  Request* r = ids_.find(f.id);
  if (!r || r->peer != src) {
    RRT_WARN("FIN for unknown request %llx from rank %d dropped",
             static_cast<unsigned long long>(f.id), src);
    return;
  }
  // A FIN with a status: the peer's RDMA READ (our send) or WRITE (our receive) failed.
  const Status why = f.status == 0 ? Status::Ok : Status::ErrTransport;
  if (f.status != 0)
    RRT_WARN("rank %d reports its rendezvous transfer failed (%d)", src, static_cast<int>(f.status));
  if (r->kind == core::ReqKind::Send &&
      (r->phase == static_cast<uint8_t>(Phase::WaitFin) ||
       r->phase == static_cast<uint8_t>(Phase::WaitCts))) {
    finishSend(r, why);
  } else if (r->kind == core::ReqKind::Recv &&
             (r->phase == static_cast<uint8_t>(Phase::RecvWaitFin) ||
              (r->phase == static_cast<uint8_t>(Phase::RecvData) && f.status != 0))) {
    // RecvData: the sender's pipelined copy failed; no more Data comes.
    finishRecv(r, why);
  } else {
    RRT_WARN("FIN in unexpected state %d from rank %d dropped", r->phase, src);
  }
}

void Engine::onAck(int src, const uint8_t* data, size_t len) {
  wire::FinHeader f;
  if (len < sizeof f) return;
  memcpy(&f, data, sizeof f);
  Request* r = ids_.find(f.id);
  if (!r || r->peer != src || r->kind != core::ReqKind::Send) {
    RRT_WARN("Ack for unknown request from rank %d dropped", src);
    return;
  }
  if (r->phase == static_cast<uint8_t>(Phase::WaitAck)) {
    finishSend(r, Status::Ok);
  } else {
    // The Ack overtook the end of our own sending (the receiver matched on the first
    // fragment): finish when the last fragment is out.
    r->flags |= kAcked;
  }
}

}  // namespace rrt::proto
