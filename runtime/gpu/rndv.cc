#include "runtime/gpu/rndv.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/gpu/gpu.h"

namespace rrt::gpu {

namespace {

constexpr size_t kImportCapacity = 64;  // open IPC mappings kept per process
constexpr size_t kSendSlots = 4;        // host slots of a pipelined send (chunks in flight)

enum class Kind : uint8_t { IpcSend, IpcHeld, IpcRecv, PipeSend, PipeRecv };

struct Op {
  Kind kind = Kind::IpcSend;
  IpcRef ref{};
  int peer = -1;
  void* mapped = nullptr;  // IpcRecv: local address of the peer allocation's base
  Event event = nullptr;   // IpcRecv: recorded after the copy
  Pipeline* pipe = nullptr;
  void* host = nullptr;    // PipeSend: the slots
  size_t capacity = 0;
  bool (*arrived)(void*, size_t) = nullptr;  // PipeRecv
  void* arg = nullptr;
};

struct State {
  Driver* d = nullptr;  // the driver the caches below belong to
  std::unique_ptr<IpcExportCache> exports;
  std::unique_ptr<IpcImportCache> imports;
  std::vector<Op*> freeOps;
  std::vector<Event> freeEvents;
  std::vector<Pipeline*> freePipes;
  uint64_t exportCalls = 0;
};

State& st() {
  static State* s = new State;  // never destroyed (like gpu.cc's state)
  return *s;
}

// The caches of the current driver (made on first use after installDriver / init).
State* ready() {
  State& s = st();
  Driver* d = driver();
  if (!d) return nullptr;
  if (s.d != d) {
    rndvShutdown();
    s.d = d;
    s.exports = std::make_unique<IpcExportCache>(d);
    s.imports = std::make_unique<IpcImportCache>(d, kImportCapacity);
  }
  return &s;
}

Op* newOp(Kind k) {
  State& s = st();
  Op* op;
  if (!s.freeOps.empty()) {
    op = s.freeOps.back();
    s.freeOps.pop_back();
  } else {
    op = new Op;
  }
  *op = Op{};
  op->kind = k;
  return op;
}

Op* opOf(const core::Request* r) { return static_cast<Op*>(r->gpuOp); }

Pipeline* newPipe() {
  State& s = st();
  if (!s.freePipes.empty()) {
    Pipeline* p = s.freePipes.back();
    s.freePipes.pop_back();
    return p;
  }
  return new Pipeline(s.d);
}

// PipeRecv: the slot of chunk i is the staging buffer at its offset; it is "filled" when the
// protocol says its bytes have arrived.
Status recvArrived(void* arg, size_t, void*, size_t offset, size_t n) {
  Op* op = static_cast<Op*>(arg);
  return op->arrived(op->arg, offset + n) ? Status::Ok : Status::NoResource;
}

}  // namespace

void rndvShutdown() {
  State& s = st();
  if (!s.d) return;
  for (Event e : s.freeEvents) s.d->eventDestroy(e);
  s.freeEvents.clear();
  for (Pipeline* p : s.freePipes) delete p;
  s.freePipes.clear();
  s.imports.reset();  // closes every mapping
  s.exports.reset();
  s.d = nullptr;
}

size_t pipeChunk(size_t len) {
  const size_t c = Pipeline::chunkFor(len, config::sizeOr(config::Tunable::CudaChunk, 0));
  return std::max<size_t>(1, std::min(c, len));
}

Status ipcExport(const void* buf, size_t bytes, const PointerInfo& info, IpcRef* out) {
  State* s = ready();
  if (!s) return Status::ErrUnsupported;
  const uintptr_t a = reinterpret_cast<uintptr_t>(buf);
  if (info.type != memory::MemType::Cuda || a < info.base || a - info.base > info.size ||
      bytes > info.size - (a - info.base))
    return Status::ErrArg;
  ++s->exportCalls;
  RRT_TRY(s->exports->get(info, &out->key));
  out->allocSize = info.size;
  out->offset = a - info.base;
  return Status::Ok;
}

Status ipcSendStart(core::Request* r, const IpcRef& ref) {
  Op* op = newOp(Kind::IpcSend);
  op->ref = ref;
  r->gpuOp = op;
  return Status::Ok;
}

const IpcRef* ipcSendRef(const core::Request* r) {
  const Op* op = opOf(r);
  return op && op->kind == Kind::IpcSend ? &op->ref : nullptr;
}

Status ipcHold(core::Request* u, const IpcRef& ref) {
  Op* op = newOp(Kind::IpcHeld);
  op->ref = ref;
  u->gpuOp = op;
  return Status::Ok;
}

const IpcRef* ipcHeld(const core::Request* u) {
  const Op* op = opOf(u);
  return op && op->kind == Kind::IpcHeld ? &op->ref : nullptr;
}

Status ipcRecvStart(core::Request* r, int peer, const IpcRef& ref, void* dst, size_t len) {
  State* s = ready();
  if (!s) return Status::ErrUnsupported;
  Stream stream;
  RRT_TRY(copyStream(&stream));
  Event ev = nullptr;
  if (!s->freeEvents.empty()) {
    ev = s->freeEvents.back();
    s->freeEvents.pop_back();
  } else {
    RRT_TRY(s->d->eventCreate(&ev));
  }
  void* mapped = nullptr;
  Status rc = s->imports->acquire(peer, ref.key, &mapped);
  if (rc == Status::Ok) {
    rc = s->d->memcpyAsync(dst, static_cast<const char*>(mapped) + ref.offset, len, stream);
    if (rc == Status::Ok) rc = s->d->eventRecord(ev, stream);
    if (rc != Status::Ok) s->imports->release(peer, ref.key.base, mapped);
  }
  if (rc != Status::Ok) {
    s->freeEvents.push_back(ev);
    return rc;
  }
  rndvEnd(r);  // a held reference (unexpected RTS) is replaced by the copy
  Op* op = newOp(Kind::IpcRecv);
  op->ref = ref;
  op->peer = peer;
  op->mapped = mapped;
  op->event = ev;
  r->gpuOp = op;
  return Status::Ok;
}

Status pipeSendStart(core::Request* r, size_t len, Pipeline::Transfer transfer, void* arg) {
  State* s = ready();
  if (!s || len == 0) return Status::ErrArg;
  Stream stream;
  RRT_TRY(copyStream(&stream));
  rndvEnd(r);  // an IPC send that fell back: its reference goes
  const size_t chunk = pipeChunk(len);
  const size_t slots = std::min(kSendSlots, (len + chunk - 1) / chunk);
  Op* op = newOp(Kind::PipeSend);
  op->host = hostBuffer(slots * chunk, &op->capacity);
  if (!op->host) {
    st().freeOps.push_back(op);
    return Status::ErrNoMemory;
  }
  op->pipe = newPipe();
  r->gpuOp = op;  // from here rndvEnd gives everything back
  Pipeline::Plan plan;
  plan.dir = Direction::ToHost;
  plan.device = r->buf;
  plan.bytes = len;
  plan.host = op->host;
  plan.hostBytes = slots * chunk;
  plan.chunk = chunk;
  plan.depth = slots;
  plan.transfer = transfer;
  plan.arg = arg;
  Status rc = op->pipe->start(plan, stream);
  if (rc != Status::Ok) rndvEnd(r);
  return rc;
}

Status pipeRecvStart(core::Request* r, size_t len, bool (*arrived)(void* arg, size_t upTo),
                     void* arg) {
  State* s = ready();
  void* dev = stagedUser(r);
  if (!s || !dev || len == 0) return Status::ErrArg;
  Stream stream;
  RRT_TRY(copyStream(&stream));
  Op* op = newOp(Kind::PipeRecv);
  op->arrived = arrived;
  op->arg = arg;
  op->pipe = newPipe();
  r->gpuOp = op;
  Pipeline::Plan plan;
  plan.dir = Direction::ToDevice;
  plan.device = dev;
  plan.bytes = len;
  plan.host = r->buf;  // the whole-message staging buffer: chunk i's slot is its own offset
  plan.hostBytes = len;
  plan.chunk = pipeChunk(len);
  plan.depth = Pipeline::kMaxDepth;
  plan.transfer = &recvArrived;
  plan.arg = op;
  Status rc = op->pipe->start(plan, stream);
  if (rc != Status::Ok) rndvEnd(r);
  return rc;
}

Status rndvProgress(core::Request* r) {
  Op* op = opOf(r);
  if (!op) return Status::Ok;
  switch (op->kind) {
    case Kind::IpcRecv:
      return st().d ? st().d->eventQuery(op->event) : Status::ErrUnsupported;
    case Kind::PipeSend:
    case Kind::PipeRecv:
      return op->pipe->progress();
    default:
      return Status::Ok;
  }
}

void rndvEnd(core::Request* r) {
  Op* op = opOf(r);
  if (!op) return;
  r->gpuOp = nullptr;
  State& s = st();
  if (op->kind == Kind::IpcRecv && s.d) {
    // The copy may still run after a failure elsewhere: wait for it before giving back the
    // mapping and the event (error paths only; a finished copy's query is immediate).
    Stream stream;
    if (s.d->eventQuery(op->event) == Status::InProgress && copyStream(&stream) == Status::Ok)
      (void)s.d->streamSynchronize(stream);
    s.imports->release(op->peer, op->ref.key.base, op->mapped);
    s.freeEvents.push_back(op->event);
  }
  if (op->pipe) {
    // Copies still queued read or write the slots: let them drain before reuse.
    Stream stream;
    if (op->pipe->issued() > op->pipe->released() && copyStream(&stream) == Status::Ok && s.d)
      (void)s.d->streamSynchronize(stream);
    if (s.d) s.freePipes.push_back(op->pipe);
    else delete op->pipe;
  }
  if (op->host) releaseHostBuffer(op->host, op->capacity);
  s.freeOps.push_back(op);
}

void ipcPeerGone(int peer) {
  if (State* s = ready()) s->imports->dropPeer(peer);
}

IpcStats ipcStats() {
  State* s = ready();
  if (!s) return IpcStats{};
  return IpcStats{s->exportCalls, s->exports->driverCalls(), s->imports->opens(),
                  s->imports->closes(), s->imports->open()};
}

}  // namespace rrt::gpu
