// The direct path of one-sided operations: a contiguous put / get of at least
// RRT_RMA_DIRECT_MIN bytes goes through the transport's own one-sided put / get straight into /
// out of the target's window memory (shm: CMA process_vm_writev / readv; verbs: RDMA WRITE /
// READ; tcp: PUT frames read by the target's transport into the registered region; self:
// memcpy), with no RMA header and nothing for the target's rma poller to do.
//
// Set-up (directSetup, collective at creation): each rank registers its window memory with every
// transport that has one-sided put or get (memReg where kNeedsReg, else nothing) and packs the
// remote keys into a wire::RmaWinInfo; one allgather gives every rank everyone's.
//
// An op (directIssue): the origin resolves the target's transport (the engine's peer), takes
// its key by name, checks the access against the target's window itself (an access outside it
// takes the ordinary path, which reports RRT_ERR_RMA_RANGE), registers the origin buffer where
// the transport needs it, and issues chunks of at most caps().maxZcopy. The op is the ordinary
// internal request (origin.cc), counted in flight until every chunk's completion: flush, unlock,
// fence, complete and free wait for it as for any op. Request fields while it runs: buf / bytes
// = origin buffer, offset = bytes issued, remaining = bytes to issue, srcRank = the target's
// world rank, phase = kDirectPut / kDirectGet, completion / outstanding = chunks in flight.
//
// Fallback: the ordinary path takes the op when the first chunk is declined (NoResource,
// ErrUnsupported: CMA refused, any error); a NoResource after the first chunk parks the op on
// the window's retry list for the poller (chunks already issued stay valid).
//
// Delivery: where the transport's put completion means the data is in the target's memory
// (kPutDelivered: shm, verbs, self) the op is done then. Otherwise (tcp: completion = handed to
// the kernel) the target is marked unconfirmed; flush (and so fence and free) then sends it a
// zero-byte put on the ordinary path and waits for its acknowledgement, which the target sends
// only after reading everything before it on the ordered connection. Unlock and complete skip
// it (sync.cc): their own Unlock / Complete message is read after the data as well.
//
// The fast path takes a request from the pool, registers through the transport's cache (verbs)
// and allocates nothing else.
#include <algorithm>
#include <cstring>

#include "runtime/coll/coll.h"
#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"
#include "runtime/rma/window.h"

namespace rrt::rma {
namespace {

using proto::wire::RmaOp;
using proto::wire::RmaWinInfo;
using proto::wire::RmaWinKey;
using transport::Transport;

constexpr uint8_t kDirectPut = 1;
constexpr uint8_t kDirectGet = 2;
constexpr uint64_t kDefaultMin = 256 * 1024;

size_t directMinFromConfig() {
  if (config::value(config::Tunable::RmaDirectMin) == "off") return SIZE_MAX;
  const uint64_t cma = config::sizeOr(config::Tunable::ShmCmaThreshold, kDefaultMin);
  return config::sizeOr(config::Tunable::RmaDirectMin, cma);
}

const RmaWinKey* keyFor(const RmaWinInfo& info, const char* tx) {
  for (const RmaWinKey& k : info.keys)
    if (k.tx[0] && std::strncmp(k.tx, tx, sizeof k.tx) == 0) return &k;
  return nullptr;
}

Transport* txOf(const core::Request* r) {
  return proto::engine().peer(r->srcRank)->tx;
}

// The op's transfers are all over: deregisters, notes what delivery is still unproven,
// completes the op.
void finish(core::Request* r, Transport* tx) {
  auto* w = static_cast<Window*>(r->onCompleteArg);
  if (r->memHandle) {
    tx->memDereg(r->memHandle);
    r->memHandle = nullptr;
  }
  const size_t t = static_cast<size_t>(r->peer);
  if (r->phase == kDirectPut && r->offset > 0 && !(tx->caps().flags & transport::kPutDelivered) &&
      !w->unconfirmed[t]) {
    w->unconfirmed[t] = 1;
    ++w->unconfirmedCount;
  }
  r->phase = 0;
  opDone(r);
}

void chunkDone(transport::Completion* c, Status s) {
  core::Request* r = reinterpret_cast<core::Request*>(reinterpret_cast<char*>(c) -
                                                     offsetof(core::Request, completion));
  --r->outstanding;
  if (failed(s) && r->status.error == RRT_SUCCESS) r->status.error = toC(s);
  // A parked op (offset < remaining) finishes from the poller once it has issued the rest.
  if (r->outstanding == 0 && r->offset == r->remaining) finish(r, txOf(r));
}

// Issues what is left of r. NoResource: stopped for lack of resources (nothing failed). An
// error with nothing issued (offset and outstanding 0) is returned with r untouched when
// mayDecline (the caller falls back); otherwise errors end the op with that status. Ok: all
// issued (the op finishes once the last completion fires, or has finished here).
Status issueChunks(core::Request* r, Transport* tx, bool mayDecline) {
  const size_t maxChunk = std::max<size_t>(1, tx->caps().maxZcopy);
  const int world = r->srcRank;
  while (r->offset < r->remaining) {
    const size_t chunk = std::min(r->remaining - r->offset, maxChunk);
    char* local = static_cast<char*>(r->buf) + r->offset;
    const uint64_t remote = r->remoteAddr + r->offset;
    r->completion.fn = chunkDone;
    Status st = r->phase == kDirectPut
                    ? tx->put(world, local, chunk, r->memHandle, remote, r->rkey, r->rkeyLen,
                              &r->completion)
                    : tx->get(world, local, chunk, r->memHandle, remote, r->rkey, r->rkeyLen,
                              &r->completion);
    if (st == Status::InProgress) {
      ++r->outstanding;
    } else if (st != Status::Ok) {
      if (mayDecline && r->offset == 0 && r->outstanding == 0) return st;
      if (st == Status::NoResource) return st;
      if (r->status.error == RRT_SUCCESS) r->status.error = toC(st);
      r->remaining = r->offset;  // stop; what is in flight completes
      break;
    }
    r->offset += chunk;
  }
  if (r->outstanding == 0) finish(r, tx);
  return Status::Ok;
}

}  // namespace

Status directSetup(Window& w) {
  const int n = w.comm->size;
  w.directMin = directMinFromConfig();
  w.unconfirmed.assign(static_cast<size_t>(n), 0);
  RmaWinInfo mine{};
  mine.dispUnit = w.dispUnit;
  if (w.kind != Kind::Dynamic && w.size > 0 && w.directMin != SIZE_MAX) {
    int k = 0;
    for (const auto& t : proto::engine().transports()) {
      const uint32_t f = t->caps().flags;
      if (!(f & (transport::kPutZcopy | transport::kGetZcopy))) continue;
      if (k == proto::wire::kRmaWinKeys) break;
      transport::MemHandle* mh = nullptr;
      if (f & transport::kNeedsReg) {
        Status st = t->memReg(w.base, w.size, memory::MemType::Host, &mh);
        if (st != Status::Ok) {
          RRT_DEBUG("rma: %s cannot register window memory (%s): ordinary path", t->name(),
                    statusName(st));
          continue;
        }
      }
      RmaWinKey& key = mine.keys[k++];
      std::strncpy(key.tx, t->name(), sizeof key.tx - 1);
      if (mh) {
        w.regs.push_back(Window::Reg{t.get(), mh});
        key.len = static_cast<uint8_t>(t->rkeyPack(mh, key.rkey));
      }
    }
    if (k > 0) {
      mine.base = reinterpret_cast<uint64_t>(w.base);
      mine.size = w.size;
    }
  }
  w.remote.resize(static_cast<size_t>(n));
  coll::bindProtoP2p();
  coll::CollArgs a;
  a.kind = coll::CollKind::Allgather;
  a.sbuf = &mine;
  a.rbuf = w.remote.data();
  a.blockBytes = sizeof mine;
  return coll::run(*w.comm, std::move(a));
}

void directRelease(Window& w) {
  for (const Window::Reg& r : w.regs) r.tx->memDereg(r.mh);
  w.regs.clear();
}

bool directIssue(Window& w, const OpArgs& a, core::Request** request) {
  if (a.bytes == 0) return false;
  const RmaWinInfo& info = w.remote[static_cast<size_t>(a.target)];
  if (info.size == 0) return false;
  // The access must lie inside the target's window (else the ordinary path reports it).
  uint64_t off;
  if (__builtin_mul_overflow(a.disp, static_cast<uint64_t>(info.dispUnit), &off) ||
      off > info.size || a.bytes > info.size - off)
    return false;
  const int world = w.comm->worldRank(a.target);
  proto::Peer* p = proto::engine().peer(world);
  Transport* tx = p->tx;
  if (!tx || p->failed) return false;
  const uint32_t f = tx->caps().flags;
  const bool put = a.op == RmaOp::Put;
  if (!(f & (put ? transport::kPutZcopy : transport::kGetZcopy))) return false;
  const RmaWinKey* key = keyFor(info, tx->name());
  if (!key) return false;

  core::Request* r = core::requestAlloc(core::ReqKind::Send);
  r->buf = put ? const_cast<void*>(a.origin) : a.result;
  r->bytes = a.bytes;
  if (f & transport::kNeedsReg) {
    if (tx->memReg(r->buf, a.bytes, memory::MemType::Host, &r->memHandle) != Status::Ok) {
      core::requestRelease(r);
      return false;
    }
  }
  r->internal = request == nullptr;
  r->comm = w.comm;
  r->peer = a.target;
  r->srcRank = world;
  r->onCompleteArg = &w;
  r->status.source = a.target;
  r->status.tag = RRT_ANY_TAG;
  r->status.bytes = a.bytes;
  r->phase = put ? kDirectPut : kDirectGet;
  r->remoteAddr = info.base + off;
  r->rkeyLen = key->len;
  std::memcpy(r->rkey, key->rkey, key->len);
  r->offset = 0;
  r->remaining = a.bytes;
  r->outstanding = 0;
  // In flight before the first chunk: a chunk that completes at once finishes the op here.
  ++w.inFlight[static_cast<size_t>(a.target)];
  ++w.inFlightTotal;
  Status st = issueChunks(r, tx, true);
  if (st != Status::Ok && r->offset == 0 && r->outstanding == 0) {
    // Declined: the ordinary path takes it.
    RRT_DEBUG("rma: %s %s to rank %d declined (%s): ordinary path", tx->name(),
              put ? "put" : "get", a.target, statusName(st));
    --w.inFlight[static_cast<size_t>(a.target)];
    --w.inFlightTotal;
    if (r->memHandle) tx->memDereg(r->memHandle);
    core::requestRelease(r);
    return false;
  }
  if (st == Status::NoResource) w.directRetry.pushBack(r);
  if (request) *request = r;
  return true;
}

int directProgress(Window& w) {
  int events = 0;
  while (!w.directRetry.empty()) {
    core::Request* r = w.directRetry.front();
    w.directRetry.remove(r);
    if (issueChunks(r, txOf(r), false) == Status::NoResource) {
      w.directRetry.pushFront(r);
      break;
    }
    ++events;
  }
  return events;
}

Status directConfirm(Window& w, int target) {
  if (w.unconfirmedCount == 0) return Status::Ok;
  const int lo = target >= 0 ? target : 0;
  const int hi = target >= 0 ? target + 1 : w.comm->size;
  Status st = Status::Ok;
  for (int t = lo; t < hi; ++t) {
    if (!w.unconfirmed[static_cast<size_t>(t)]) continue;
    w.unconfirmed[static_cast<size_t>(t)] = 0;
    --w.unconfirmedCount;
    OpArgs a;
    a.op = RmaOp::Put;
    a.target = t;
    Status s = issue(w, a, nullptr);  // 0 bytes: always the ordinary path
    if (st == Status::Ok) st = s;
  }
  return st;
}

}  // namespace rrt::rma
