// The receiving side: active-message dispatch, matching of eager messages and RTS against
// posted receives (or the unexpected queue), and the receiver's half of the rendezvous.
// Everything that arrives from a peer is checked before use: a malformed message is logged
// and dropped, never trusted.
#include <algorithm>
#include <cstring>

#include "runtime/core/buffer_pool.h"
#include "runtime/core/log.h"
#include "runtime/core/small_copy.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/rndv.h"
#include "runtime/proto/engine.h"

namespace rrt::proto {

using core::Request;

namespace {

inline void setMatched(Request* r, const wire::MatchHeader& m, int srcWorld, size_t total) {
  r->status.source = m.src;
  r->status.tag = m.tag;
  r->status.bytes = std::min(total, r->bytes);
  if (total > r->bytes) r->status.error = RRT_ERR_TRUNCATE;
  r->peer = srcWorld;
}

inline void copyIn(Request* r, size_t offset, const void* data, size_t len) {
  // Bytes past the receive buffer are dropped (truncation); the status says so.
  if (offset >= r->bytes) return;
  core::copySmall(static_cast<char*>(r->buf) + offset, data, std::min(len, r->bytes - offset));
}

}  // namespace

// Inlined into onAm: it is the receive of every small message.
[[gnu::always_inline]] inline void Engine::onEager(int src, const uint8_t* data, size_t len,
                                                  bool sync) {
  wire::EagerSyncHeader h;
  const size_t hlen = sync ? sizeof(wire::EagerSyncHeader) : sizeof(wire::EagerHeader);
  if (len < hlen) {
    RRT_WARN("short eager message (%zu bytes) from rank %d dropped", len, src);
    return;
  }
  // Constant sizes: the copies become a few moves instead of a memcpy call.
  if (sync) memcpy(&h, data, sizeof(wire::EagerSyncHeader));
  else memcpy(&h.e, data, sizeof(wire::EagerHeader));
  const size_t plen = len - hlen;
  const uint8_t* payload = data + hlen;
  Peer& p = peers_[static_cast<size_t>(src)];
  if (h.e.total < plen || p.rxEager || !Matcher::validContext(h.e.m.ctx)) {
    RRT_WARN("inconsistent eager message from rank %d dropped", src);
    return;
  }
  if (h.e.m.seq != p.recvSeq)
    RRT_DEBUG("rank %d: sequence %u, expected %u", src, h.e.m.seq, p.recvSeq);
  p.recvSeq = h.e.m.seq + 1;

  Request* r = matcher_.queues(h.e.m.ctx).takePosted(h.e.m.src, h.e.m.tag);
  if (r) {
    setMatched(r, h.e.m, src, h.e.total);
    copyIn(r, 0, payload, plen);
    if (sync) {
      wire::FinHeader a{h.sreq, 0, 0};
      sendCtl(src, wire::kAck, &a, sizeof a);
    }
    if (plen < h.e.total) {
      r->phase = static_cast<uint8_t>(Phase::RecvEager);
      r->offset = plen;
      r->remaining = h.e.total;
      p.rxEager = r;
    } else {
      finishRecv(r, Status::Ok);
    }
    return;
  }
  // Unexpected: keep header and data until a receive asks for them. The buffer's size comes
  // from the peer: never more than an eager message may be (the ranks share the eager limit).
  if (h.e.total > p.proto.eagerLimit) {
    RRT_WARN("eager message of %llu bytes from rank %d exceeds the eager limit %zu (RRT_EAGER_LIMIT "
             "differs between ranks?): dropped",
             static_cast<unsigned long long>(h.e.total), src, p.proto.eagerLimit);
    return;
  }
  Request* u = core::requestAlloc(core::ReqKind::Recv);
  u->internal = true;
  u->phase = static_cast<uint8_t>(Phase::UnexpEager);
  u->ctx = h.e.m.ctx;
  u->seq = h.e.m.seq;  // names it to a Cancel
  u->srcRank = h.e.m.src;
  u->tag = h.e.m.tag;
  u->peer = src;
  u->remaining = h.e.total;
  u->offset = plen;
  u->buf = core::bufferGet(h.e.total);
  u->bytes = h.e.total;
  if (sync) {
    u->flags |= core::kSendSync;
    u->remoteId = h.sreq;
  }
  if (plen) memcpy(u->buf, payload, plen);
  if (plen < h.e.total) p.rxEager = u;
  matcher_.queues(h.e.m.ctx).addUnexpected(u);
}

void Engine::onAm(void* arg, int src, transport::AmId id, const void* data, size_t len) {
  Engine* e = static_cast<Engine*>(arg);
  if (src < 0 || src >= e->job_.size) {
    RRT_WARN("message from invalid rank %d dropped", src);
    return;
  }
  // A peer may reach us before we ever addressed it (ANY_SOURCE receives): replies (CTS,
  // FIN, Ack) and rendezvous reads need its transport, so connect on first contact.
  if (__builtin_expect(e->peers_[static_cast<size_t>(src)].tx == nullptr, 0)) e->connect(src);
  const uint8_t* d = static_cast<const uint8_t*>(data);
  switch (id) {
    case wire::kEager: e->onEager(src, d, len, false); break;
    case wire::kEagerSync: e->onEager(src, d, len, true); break;
    case wire::kEagerFrag: e->onEagerFrag(src, d, len); break;
    case wire::kRts: e->onRts(src, d, len); break;
    case wire::kCts: e->onCts(src, d, len); break;
    case wire::kData: e->onData(src, d, len); break;
    case wire::kFin: e->onFin(src, d, len); break;
    case wire::kAck: e->onAck(src, d, len); break;
    case wire::kCancel: e->onCancel(src, d, len); break;
    case wire::kCancelAck: e->onCancelAck(src, d, len); break;
    default: RRT_WARN("unknown message id %u from rank %d dropped", id, src);
  }
}

void Engine::onEagerFrag(int src, const uint8_t* data, size_t len) {
  Peer& p = peers_[static_cast<size_t>(src)];
  Request* r = p.rxEager;
  if (!r || r->offset + len > r->remaining) {
    RRT_WARN("stray eager fragment (%zu bytes) from rank %d dropped", len, src);
    return;
  }
  copyIn(r, r->offset, data, len);
  r->offset += len;
  if (r->offset < r->remaining) return;
  p.rxEager = nullptr;
  if (r->phase == static_cast<uint8_t>(Phase::RecvEager)) finishRecv(r, Status::Ok);
  // An unexpected message is now whole; it waits in the queue for its receive.
}

void Engine::onRts(int src, const uint8_t* data, size_t len) {
  wire::RtsHeader h;
  if (len < sizeof h) {
    RRT_WARN("short RTS (%zu bytes) from rank %d dropped", len, src);
    return;
  }
  memcpy(&h, data, sizeof h);
  if (h.rkeyLen > transport::kMaxRkeyBytes || len < sizeof h + h.rkeyLen ||
      h.mode > static_cast<uint8_t>(wire::RndvMode::Ipc) || !Matcher::validContext(h.m.ctx)) {
    RRT_WARN("malformed RTS from rank %d dropped", src);
    return;
  }
  // Ipc: the sender's device allocation follows; every field is checked before it is used.
  gpu::IpcRef ipc;
  const bool isIpc = h.mode == static_cast<uint8_t>(wire::RndvMode::Ipc);
  if (isIpc) {
    wire::IpcRts x;
    if (h.rkeyLen != 0 || len < sizeof h + sizeof x ||
        h.memType != static_cast<uint8_t>(memory::MemType::Cuda)) {
      RRT_WARN("malformed IPC RTS from rank %d dropped", src);
      return;
    }
    memcpy(&x, data + sizeof h, sizeof x);
    if (x.offset > x.allocSize || h.size > x.allocSize - x.offset || x.base == 0 ||
        x.base + x.allocSize < x.base) {
      RRT_WARN("IPC RTS from rank %d out of its allocation (offset %llu + size %llu > %llu) "
               "dropped", src, static_cast<unsigned long long>(x.offset),
               static_cast<unsigned long long>(h.size), static_cast<unsigned long long>(x.allocSize));
      return;
    }
    memcpy(ipc.key.handle.bytes, x.handle, sizeof x.handle);
    ipc.key.base = x.base;
    ipc.key.bufferId = x.bufferId;
    ipc.allocSize = x.allocSize;
    ipc.offset = x.offset;
  }
  Peer& p = peers_[static_cast<size_t>(src)];
  p.recvSeq = h.m.seq + 1;
  const uint8_t* rkey = data + sizeof h;
  Request* r = matcher_.queues(h.m.ctx).takePosted(h.m.src, h.m.tag);
  if (r) {
    setMatched(r, h.m, src, h.size);
    startRndvRecv(r, h, rkey, isIpc ? &ipc : nullptr);
    return;
  }
  Request* u = core::requestAlloc(core::ReqKind::Recv);
  u->internal = true;
  u->phase = static_cast<uint8_t>(Phase::UnexpRts);
  u->ctx = h.m.ctx;
  u->seq = h.m.seq;
  u->srcRank = h.m.src;
  u->tag = h.m.tag;
  u->peer = src;
  u->remoteId = h.sreq;
  u->remaining = h.size;
  u->remoteAddr = h.addr;
  u->rndvMode = h.mode;
  u->memType = static_cast<memory::MemType>(h.memType);
  u->rkeyLen = h.rkeyLen;
  memcpy(u->rkey, rkey, h.rkeyLen);
  if (isIpc) (void)gpu::ipcHold(u, ipc);
  matcher_.queues(h.m.ctx).addUnexpected(u);
}

void Engine::startRndvRecv(Request* r, const wire::RtsHeader& rts, const uint8_t* rkey,
                           const void* ipcRef) {
  const int w = r->peer;
  Peer& p = peers_[static_cast<size_t>(w)];
  r->remoteId = rts.sreq;
  r->remaining = std::min<uint64_t>(rts.size, r->bytes);  // bytes we take
  r->offset = 0;
  r->outstanding = 0;
  if (r->remaining == 0) {
    wire::FinHeader f{rts.sreq, 0, 0};
    sendCtl(w, wire::kFin, &f, sizeof f);
    finishRecv(r, Status::Ok);
    return;
  }
  auto mode = static_cast<wire::RndvMode>(rts.mode);
  if (mode == wire::RndvMode::Ipc) {
    // Copy straight from the sender's device buffer into ours (the device buffer behind a
    // staged receive, or host memory). Anything refused: the pipelined copy (CTS Copy).
    const auto* ref = static_cast<const gpu::IpcRef*>(ipcRef);
    void* dst = gpu::stagedUser(r) ? gpu::stagedUser(r) : r->buf;
    Status st = ref && gpu::enabled() ? gpu::ipcRecvStart(r, w, *ref, dst, r->remaining)
                                      : Status::ErrUnsupported;
    if (st == Status::Ok) {
      r->rndvMode = static_cast<uint8_t>(mode);
      r->phase = static_cast<uint8_t>(Phase::IpcCopy);
      r->id = ids_.add(r);  // so that a failing peer ends it
      gpuWatch(r);
      stepGpu(r);
      return;
    }
    RRT_DEBUG("IPC rendezvous from rank %d refused (%s): pipelined copy", w, statusName(st));
    mode = wire::RndvMode::Copy;
  }
  if (mode == wire::RndvMode::Get && !(p.tx->caps().flags & transport::kGetZcopy))
    mode = wire::RndvMode::Copy;
  if (mode == wire::RndvMode::Get) {
    r->remoteAddr = rts.addr;
    r->rkeyLen = rts.rkeyLen;
    memcpy(r->rkey, rkey, rts.rkeyLen);
    r->rndvMode = static_cast<uint8_t>(mode);
    if (p.tx->caps().flags & transport::kNeedsReg) {
      Status st = registerRecv(p, r);
      if (st != Status::Ok) mode = wire::RndvMode::Copy;
    }
    if (mode == wire::RndvMode::Get) {
      r->phase = static_cast<uint8_t>(Phase::GetIssue);
      issueGets(r);
      return;
    }
  }
  // Put or Copy: tell the sender where the data goes.
  r->id = ids_.add(r);
  struct {
    wire::CtsHeader c;
    uint8_t rkey[transport::kMaxRkeyBytes];
  } msg{};
  msg.c.sreq = rts.sreq;
  msg.c.rreq = r->id;
  msg.c.len = r->remaining;
  msg.c.mode = static_cast<uint8_t>(mode == wire::RndvMode::Put ? wire::RndvMode::Put
                                                                  : wire::RndvMode::Copy);
  if (mode == wire::RndvMode::Put) {
    if (p.tx->caps().flags & transport::kNeedsReg) {
      Status st = registerRecv(p, r);
      if (st != Status::Ok) msg.c.mode = static_cast<uint8_t>(wire::RndvMode::Copy);
    }
    if (msg.c.mode == static_cast<uint8_t>(wire::RndvMode::Put)) {
      msg.c.addr = reinterpret_cast<uint64_t>(r->buf);
      msg.c.rkeyLen = static_cast<uint8_t>(p.tx->rkeyPack(r->memHandle, msg.rkey));
    }
  }
  r->phase = static_cast<uint8_t>(msg.c.mode == static_cast<uint8_t>(wire::RndvMode::Put)
                                      ? Phase::RecvWaitFin
                                      : Phase::RecvData);
  sendCtl(w, wire::kCts, &msg, sizeof msg.c + msg.c.rkeyLen);
  if (__builtin_expect(r->gpuStage != nullptr, 0) && r->phase == static_cast<uint8_t>(Phase::RecvData))
    startPipeRecv(r);
}

// The receive buffer of a zero-copy rendezvous, registered with the transport. A device receive
// (staged through host memory by irecv) registers the device buffer itself where the transport
// can (GPUDirect RDMA): the staging is dropped and the data lands on the device with no copy.
// Where it cannot, the error sends the caller to the pipelined copy, as before GPUDirect.
Status Engine::registerRecv(Peer& p, Request* r) {
  void* dev = gpu::stagedUser(r);
  if (!dev) return p.tx->memReg(r->buf, r->bytes, bufferMemType(r), &r->memHandle);
  if (!(p.tx->caps().zcopyMemTypes & memory::memTypeBit(memory::MemType::Cuda)))
    return Status::ErrUnsupported;
  RRT_TRY(p.tx->memReg(dev, r->bytes, memory::MemType::Cuda, &r->memHandle));
  gpu::dropStage(r);  // r->buf is the device buffer again
  r->memType = memory::MemType::Cuda;
  return Status::Ok;
}

void Engine::issueGets(Request* r) {
  const int w = r->peer;
  Peer& p = peers_[static_cast<size_t>(w)];
  if (p.failed) {
    finishRecv(r, Status::ErrProcFailed);
    return;
  }
  const size_t maxChunk = std::max<size_t>(1, p.tx->caps().maxZcopy);
  while (r->offset < r->remaining) {
    const size_t chunk = std::min(r->remaining - r->offset, maxChunk);
    r->completion.fn = &Engine::onGetDone;
    Status st = p.tx->get(w, static_cast<char*>(r->buf) + r->offset, chunk, r->memHandle,
                          r->remoteAddr + r->offset, r->rkey, r->rkeyLen, &r->completion);
    if (st == Status::InProgress) {
      ++r->outstanding;
    } else if (st == Status::NoResource) {
      getRetry_.pushBack(r);
      return;
    } else if (st == Status::ErrUnsupported && r->offset == 0 && r->outstanding == 0) {
      // One-sided access refused (e.g. CMA denied): fall back to the pipelined copy.
      RRT_INFO("get from rank %d refused: pipelined copy instead", w);
      wire::RtsHeader rts{};
      rts.sreq = r->remoteId;
      rts.size = r->remaining;
      rts.mode = static_cast<uint8_t>(wire::RndvMode::Copy);
      if (r->memHandle) {
        p.tx->memDereg(r->memHandle);
        r->memHandle = nullptr;
      }
      if (r->memType == memory::MemType::Cuda && !r->gpuStage) {
        // The device buffer was registered (GPUDirect RDMA): the copy needs its staging back.
        Status st = gpu::stageRecv(r);
        if (st != Status::Ok) {
          wire::FinHeader f{r->remoteId, static_cast<int32_t>(st), 0};
          sendCtl(w, wire::kFin, &f, sizeof f);
          finishRecv(r, st);
          return;
        }
      }
      startRndvRecv(r, rts, nullptr);
      return;
    } else if (st != Status::Ok) {
      // Stop issuing; the sender is released either way (its part is done).
      r->status.error = static_cast<int>(st);
      r->remaining = r->offset;
      if (r->outstanding == 0) {
        wire::FinHeader f{r->remoteId, r->status.error, 0};
        sendCtl(w, wire::kFin, &f, sizeof f);
        finishRecv(r, st);
      }
      return;
    }
    r->offset += chunk;
  }
  if (r->outstanding == 0) {
    wire::FinHeader f{r->remoteId, 0, 0};
    sendCtl(w, wire::kFin, &f, sizeof f);
    finishRecv(r, Status::Ok);
  }
}

void Engine::onGetDone(transport::Completion* c, Status s) {
  Request* r = reinterpret_cast<Request*>(reinterpret_cast<char*>(c) - offsetof(Request, completion));
  Engine& e = engine();
  --r->outstanding;
  if (failed(s) && r->status.error == RRT_SUCCESS) r->status.error = static_cast<int>(s);
  if (r->outstanding == 0 && r->offset == r->remaining) {
    // The FIN releases the sender either way; after a failed read it says so, and the receive
    // ends with the read's error (its buffer does not hold the message).
    wire::FinHeader f{r->remoteId, r->status.error, 0};
    e.sendCtl(r->peer, wire::kFin, &f, sizeof f);
    e.finishRecv(r, static_cast<Status>(r->status.error));
  }
}

void Engine::onData(int src, const uint8_t* data, size_t len) {
  wire::DataHeader d;
  if (len < sizeof d) return;
  memcpy(&d, data, sizeof d);
  const size_t plen = len - sizeof d;
  Request* r = ids_.find(d.rreq);
  if (!r || r->peer != src || r->phase != static_cast<uint8_t>(Phase::RecvData) ||
      d.offset > r->remaining || plen > r->remaining - d.offset) {
    RRT_WARN("Data fragment for unknown request or out of bounds from rank %d dropped", src);
    return;
  }
  memcpy(static_cast<char*>(r->buf) + d.offset, data + sizeof d, plen);
  r->offset += plen;
  if (__builtin_expect(r->gpuOp != nullptr, 0)) {
    stepGpu(r);  // chunks on to the device as they complete; finishes after the last copy
    return;
  }
  if (r->offset >= r->remaining) finishRecv(r, Status::Ok);
}

void Engine::finishRecv(Request* r, Status s) {
  if (r->id) {
    ids_.remove(r->id);
    r->id = 0;
  }
  if (r->memHandle) {
    Peer& p = peers_[static_cast<size_t>(r->peer)];
    if (p.tx) p.tx->memDereg(r->memHandle);
    r->memHandle = nullptr;
  }
  if (__builtin_expect(r->gpuOp != nullptr, 0)) {
    // IPC copy or pipelined receive: the data went to the device buffer by itself.
    gpuUnwatch(r);
    gpu::rndvEnd(r);
    gpu::dropStage(r);
  }
  if (__builtin_expect(r->gpuStage != nullptr, 0)) s = gpu::unstage(r, s);  // to device memory
  core::requestComplete(r, s);
}

// ---- posting receives -----------------------------------------------------------------------

void Engine::startRecv(Request* r) {
  MatchQueues& q = matcher_.queues(r->ctx);
  Request* u = q.findUnexpected(r->srcRank, r->tag, true);
  if (!u) {
    q.post(r);
    return;
  }
  receiveUnexpected(r, u);
}

void Engine::receiveUnexpected(Request* r, Request* u) {
  wire::MatchHeader m{u->ctx, u->srcRank, u->tag, 0};
  setMatched(r, m, u->peer, u->remaining);
  if (u->phase == static_cast<uint8_t>(Phase::UnexpRts)) {
    wire::RtsHeader rts{};
    rts.sreq = u->remoteId;
    rts.size = u->remaining;
    rts.addr = u->remoteAddr;
    rts.mode = u->rndvMode;
    rts.rkeyLen = u->rkeyLen;
    rts.memType = static_cast<uint8_t>(u->memType);
    uint8_t rkey[transport::kMaxRkeyBytes];
    memcpy(rkey, u->rkey, u->rkeyLen);
    gpu::IpcRef ipc;
    const gpu::IpcRef* held = gpu::ipcHeld(u);
    if (held) ipc = *held;
    gpu::rndvEnd(u);
    core::requestRelease(u);
    startRndvRecv(r, rts, rkey, held ? &ipc : nullptr);
    return;
  }
  matchEager(r, u, peers_[static_cast<size_t>(u->peer)]);
}

void Engine::matchEager(Request* r, Request* u, Peer& p) {
  copyIn(r, 0, u->buf, u->offset);
  if (u->flags & core::kSendSync) {
    wire::FinHeader a{u->remoteId, 0, 0};
    sendCtl(u->peer, wire::kAck, &a, sizeof a);
  }
  const bool whole = u->offset >= u->remaining;
  if (!whole) {
    // Fragments still arriving: they go straight to the user's buffer from now on.
    r->phase = static_cast<uint8_t>(Phase::RecvEager);
    r->offset = u->offset;
    r->remaining = u->remaining;
    p.rxEager = r;
  }
  core::bufferPut(u->buf, u->bytes);
  core::requestRelease(u);
  if (whole) finishRecv(r, Status::Ok);
}

}  // namespace rrt::proto
