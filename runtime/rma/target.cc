// The target side of one-sided operations: posted header receives, and the rma poller that
// services what arrived (bounds checks, data into / out of window memory, accumulates in issue
// order per origin, lock grants, post / complete notices). Completion callbacks only queue
// work; everything that sends or posts runs from poll(), never inside the engine's handlers.
#include <algorithm>
#include <cinttypes>
#include <cstring>

#include "runtime/coll/op.h"
#include "runtime/core/datatype.h"
#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/proto/p2p.h"
#include "runtime/rma/window.h"

namespace rrt::rma {
namespace {

using proto::wire::RmaAck;
using proto::wire::RmaHeader;
using proto::wire::RmaOp;
using proto::wire::rmaDataTag;
using proto::wire::rmaReplyTag;

constexpr int kHeaderSlots = 4;
bool gPollerAdded = false;
bool gPolling = false;

void slotDone(core::Request*, void* arg) {
  auto* s = static_cast<HeaderSlot*>(arg);
  s->win->readySlots.push(s);
}

Status postSlot(HeaderSlot* s) {
  proto::Comm& c = *s->win->comm;
  core::Request* r = nullptr;
  s->req = nullptr;
  RRT_TRY(proto::irecv(c, c.ctx, s->buf, sizeof s->buf, RRT_ANY_SOURCE,
                       proto::wire::kRmaHeaderTag, &r));
  s->req = r;
  if (r->complete) {
    s->win->readySlots.push(s);
  } else {
    r->onComplete = slotDone;
    r->onCompleteArg = s;
  }
  return Status::Ok;
}

// Target memory of [disp, disp + bytes): false when any of it lies outside the window.
bool resolve(const Window& w, uint64_t disp, uint64_t bytes, char** out) {
  if (w.kind == Kind::Dynamic) {
    // Attached regions that touch count as one: walk from disp through the regions that
    // cover each next byte until bytes are covered.
    *out = nullptr;
    if (bytes == 0) return true;
    uint64_t end;
    if (__builtin_add_overflow(disp, bytes, &end)) return false;
    uint64_t at = disp;
    while (at < end) {
      bool found = false;
      for (const Region& r : w.regions)
        if (at >= r.addr && at - r.addr < r.len) {
          at = r.addr + r.len;
          found = true;
          break;
        }
      if (!found) return false;
    }
    *out = reinterpret_cast<char*>(disp);
    return true;
  }
  uint64_t off;
  if (__builtin_mul_overflow(disp, static_cast<uint64_t>(w.dispUnit), &off) || off > w.size ||
      bytes > w.size - off) {
    *out = nullptr;
    return false;
  }
  *out = w.base + off;
  return true;
}

// A request the window refuses (out of range, malformed, out of order): one log line, then the
// origin gets the error in its answer.
void refused(int src, const RmaHeader& h, Status st) {
  RRT_WARN("rma: refused operation %u (id %u, %" PRIu64 " bytes at displacement %" PRIu64
           ") from rank %d: %s", h.op, h.id, h.bytes, h.disp, src, statusName(st));
}

void sendAck(Window& w, int dst, uint32_t id, Status st) {
  RmaAck a{static_cast<int32_t>(toC(st)), 0};
  if (sendCopy(w, dst, rmaReplyTag(id), &a, sizeof a) != Status::Ok)
    RRT_WARN("rma: could not acknowledge an operation of rank %d", dst);
}

// The error an accumulate-type header carries in itself (type, op, length), or Ok.
Status checkAcc(const RmaHeader& h, size_t* elem) {
  *elem = core::predefinedTypeSize(h.type);
  if (h.type < 0 || h.type >= RRT_PREDEFINED_TYPE_COUNT || *elem == 0) return Status::ErrType;
  if (h.bytes % *elem) return Status::ErrCount;
  // Compare-and-swap reads and writes exactly one element of target memory.
  if (static_cast<RmaOp>(h.op) == RmaOp::Cas) return h.bytes == *elem ? Status::Ok : Status::ErrCount;
  if (h.rop == RRT_REPLACE || h.rop == RRT_NO_OP) return Status::Ok;
  if (h.rop < 0 || h.rop >= RRT_PREDEFINED_OP_COUNT || !coll::kernelFor(h.rop, h.type))
    return Status::ErrOp;
  return Status::Ok;
}

// inout = data op inout over bytes / elem elements. A peer chooses the displacement (in a window
// of disp_unit 1 it may be odd) and inline data sits after the header, so either side can be
// misaligned for the element type, and the kernels load it as that type: a misaligned
// operation goes through aligned scratch, one chunk at a time.
void reduceInto(coll::Kernel k, const char* data, char* addr, size_t bytes, size_t elem) {
  const size_t align = std::min<size_t>(elem & (~elem + 1), 16);  // divides the type's alignof
  const uintptr_t mis = (reinterpret_cast<uintptr_t>(data) | reinterpret_cast<uintptr_t>(addr)) &
                        (align - 1);
  if (mis == 0) {
    k(data, addr, bytes / elem);
    return;
  }
  alignas(16) char in[2048];
  alignas(16) char inout[2048];
  const size_t chunk = sizeof in / elem * elem;
  for (size_t done = 0; done < bytes; done += chunk) {
    const size_t n = std::min(chunk, bytes - done);
    std::memcpy(in, data + done, n);
    std::memcpy(inout, addr + done, n);
    k(in, inout, n / elem);
    std::memcpy(addr + done, inout, n);
  }
}

// Applies an accumulate-type operation (its turn has come) and answers it.
void applyAcc(Window& w, int src, const RmaHeader& h, const char* data, Status st) {
  const RmaOp op = static_cast<RmaOp>(h.op);
  char* addr = nullptr;
  size_t elem = 1;
  if (st == Status::Ok) st = checkAcc(h, &elem);
  if (st == Status::Ok && !resolve(w, h.disp, h.bytes, &addr)) st = Status::ErrRmaRange;
  if (st != Status::Ok) refused(src, h, st);
  const bool fetch = op != RmaOp::Acc;
  char small[proto::wire::kRmaInlineMax];
  char* old = nullptr;
  if (fetch && st == Status::Ok) {
    old = h.bytes <= sizeof small ? small : new char[h.bytes];
    if (h.bytes) std::memcpy(old, addr, h.bytes);  // addr is nullptr for 0 bytes of a dynamic window
  }
  if (st == Status::Ok && h.bytes) {
    if (op == RmaOp::Cas) {
      if (std::memcmp(addr, data, elem) == 0) std::memcpy(addr, data + elem, elem);
    } else if (h.rop == RRT_REPLACE) {
      std::memcpy(addr, data, h.bytes);
    } else if (h.rop != RRT_NO_OP) {
      reduceInto(coll::kernelFor(h.rop, h.type), data, addr, h.bytes, elem);
    }
  }
  if (!fetch) {
    sendAck(w, src, h.id, st);
    return;
  }
  // A fetch answers with the old contents; an empty answer tells the origin it failed.
  const size_t n = st == Status::Ok ? h.bytes : 0;
  Status s = old == small || old == nullptr ? sendCopy(w, src, rmaReplyTag(h.id), old, n)
                                            : sendFrom(w, src, rmaReplyTag(h.id), old, n, old);
  if (s != Status::Ok) RRT_WARN("rma: could not answer rank %d", src);
}

void linkWaiting(Window& w, TargetOp* t) {
  t->prevWaiting = nullptr;
  t->nextWaiting = w.waiting;
  if (w.waiting) w.waiting->prevWaiting = t;
  w.waiting = t;
}

void unlinkWaiting(TargetOp* t) {
  if (!t->req) return;  // its receive completed at once: never linked
  Window& w = *t->win;
  if (t->prevWaiting) t->prevWaiting->nextWaiting = t->nextWaiting;
  else w.waiting = t->nextWaiting;
  if (t->nextWaiting) t->nextWaiting->prevWaiting = t->prevWaiting;
  t->prevWaiting = t->nextWaiting = nullptr;
  t->req = nullptr;
}

// The data receive of t ended: what it got decides the op's status (a cancelled receive drops
// the op: dropWaiting).
void dataDone(core::Request* r, TargetOp* t) {
  unlinkWaiting(t);
  if (r->status.cancelled) t->dropped = true;
  if (t->status == Status::Ok && r->status.error != RRT_SUCCESS) {
    t->status = static_cast<Status>(r->status.error);
    RRT_WARN("rma: the data of operation %u from rank %d failed: %s", t->h.id, t->src,
             statusName(t->status));
  }
}

void putDataDone(core::Request* r, void* arg) {
  auto* t = static_cast<TargetOp*>(arg);
  dataDone(r, t);
  t->win->readyPuts.push(t);
}

void accDataDone(core::Request* r, void* arg) {
  auto* t = static_cast<TargetOp*>(arg);
  dataDone(r, t);
  t->ready = true;
  ++t->win->accReady;
}

// Receives the separate data message of t into buf (bytes; nullptr / 0 discards it).
void receiveData(Window& w, TargetOp* t, void* buf, size_t bytes,
                 void (*done)(core::Request*, void*)) {
  proto::Comm& c = *w.comm;
  core::Request* r = nullptr;
  Status st = proto::irecv(c, c.ctx, buf, bytes, t->src, rmaDataTag(t->h.id), &r);
  if (st != Status::Ok) {  // the origin is gone: answer nothing, but finish the op here
    t->status = st;
    core::Request fake;
    fake.status.error = toC(st);
    done(&fake, t);
    return;
  }
  if (r->complete) {
    done(r, t);
    core::requestRelease(r);
  } else {
    r->onComplete = done;
    r->onCompleteArg = t;
    r->userFreed = true;
    t->req = r;
    linkWaiting(w, t);
  }
}

bool grantable(const Window& w, uint8_t type) {
  if (w.exclusiveHolder >= 0) return false;
  return type == RRT_LOCK_SHARED || w.sharedHolders == 0;
}

void grant(Window& w, int src, uint8_t type, uint32_t id) {
  if (type == RRT_LOCK_EXCLUSIVE) {
    w.exclusiveHolder = src;
  } else {
    ++w.sharedHolders;
    ++w.sharedBy[static_cast<size_t>(src)];
  }
  sendAck(w, src, id, Status::Ok);
}

void handleHeader(Window& w, HeaderSlot* s) {
  const core::Request* r = s->req;
  const int src = r->status.source;
  if (r->status.error != RRT_SUCCESS || r->status.bytes < sizeof(RmaHeader) || src < 0 ||
      src >= w.comm->size) {
    RRT_WARN("rma: dropped a malformed request (%zu bytes, error %d)", r->status.bytes,
             r->status.error);
    return;
  }
  RmaHeader h;
  std::memcpy(&h, s->buf, sizeof h);
  const char* payload = reinterpret_cast<const char*>(s->buf) + sizeof h;
  const size_t payloadBytes = r->status.bytes - sizeof h;
  const RmaOp op = static_cast<RmaOp>(h.op);
  const bool accLike = op == RmaOp::Acc || op == RmaOp::GetAcc || op == RmaOp::Cas;
  switch (op) {
    case RmaOp::Put: {
      char* addr = nullptr;
      Status st = resolve(w, h.disp, h.bytes, &addr) ? Status::Ok : Status::ErrRmaRange;
      if (h.inlined) {
        if (st == Status::Ok && payloadBytes != h.bytes) st = Status::ErrCount;
        if (st != Status::Ok) refused(src, h, st);
        if (st == Status::Ok && h.bytes) std::memcpy(addr, payload, h.bytes);
        sendAck(w, src, h.id, st);
        return;
      }
      if (st != Status::Ok) refused(src, h, st);
      TargetOp* t = targetOpAlloc();
      t->win = &w;
      t->src = src;
      t->h = h;
      t->status = st;
      // Large puts land straight in window memory (zero-copy rendezvous).
      receiveData(w, t, st == Status::Ok ? addr : nullptr, st == Status::Ok ? h.bytes : 0,
                  putDataDone);
      return;
    }
    case RmaOp::Get: {
      char* addr = nullptr;
      const bool ok = resolve(w, h.disp, h.bytes, &addr);
      if (!ok) refused(src, h, Status::ErrRmaRange);
      // From window memory, zero-copy for large ones; an empty answer reports the range error.
      if (sendFrom(w, src, rmaReplyTag(h.id), addr, ok ? h.bytes : 0, nullptr) != Status::Ok)
        RRT_WARN("rma: could not answer a get of rank %d", src);
      return;
    }
    case RmaOp::Lock:
      if (h.lockType != RRT_LOCK_SHARED && h.lockType != RRT_LOCK_EXCLUSIVE) {
        refused(src, h, Status::ErrArg);
        sendAck(w, src, h.id, Status::ErrArg);
      } else if (w.lockQueue.empty() && grantable(w, h.lockType)) {
        grant(w, src, h.lockType, h.id);
      } else {
        w.lockQueue.push_back(Window::LockWaiter{src, h.lockType, h.id});
      }
      return;
    case RmaOp::Unlock: {
      Status st = Status::Ok;
      // Only a lock src holds (a stray unlock must not release another origin's lock).
      if (w.exclusiveHolder == src) {
        w.exclusiveHolder = -1;
      } else if (w.sharedBy[static_cast<size_t>(src)] > 0) {
        --w.sharedBy[static_cast<size_t>(src)];
        --w.sharedHolders;
      } else {
        st = Status::ErrRmaSync;
        refused(src, h, st);
      }
      sendAck(w, src, h.id, st);
      while (!w.lockQueue.empty() && grantable(w, w.lockQueue.front().type)) {
        const Window::LockWaiter q = w.lockQueue.front();
        w.lockQueue.pop_front();
        grant(w, q.src, q.type, q.id);
      }
      return;
    }
    case RmaOp::Post:
      ++w.postsFrom[static_cast<size_t>(src)];
      return;
    case RmaOp::Complete:
      ++w.completesFrom[static_cast<size_t>(src)];
      return;
    default:
      break;
  }
  if (!accLike) {
    RRT_WARN("rma: dropped a request with unknown operation %u from rank %d", h.op, src);
    return;
  }
  // Accumulate-type: payload bytes = h.bytes (Cas: two elements; GetAcc with NO_OP: none).
  const size_t elem = core::predefinedTypeSize(h.type);
  const size_t want = op == RmaOp::Cas ? 2 * elem
                      : (op == RmaOp::GetAcc && h.rop == RRT_NO_OP) ? 0
                                                                    : static_cast<size_t>(h.bytes);
  auto& q = w.accQueue[static_cast<size_t>(src)];
  Status st = Status::Ok;
  if (h.inlined && payloadBytes != want) st = Status::ErrCount;
  if (h.inlined && q.empty()) {
    applyAcc(w, src, h, payload, st);
    return;
  }
  TargetOp* t = targetOpAlloc();
  t->win = &w;
  t->src = src;
  t->h = h;
  t->status = st;
  q.push_back(t);
  if (h.inlined) {
    t->data = new char[payloadBytes ? payloadBytes : 1];
    t->owned = true;
    std::memcpy(t->data, payload, payloadBytes);
    t->ready = true;
    ++w.accReady;
    return;
  }
  char* addr = nullptr;
  size_t dummy;
  if (st == Status::Ok) st = checkAcc(h, &dummy);
  if (st == Status::Ok && !resolve(w, h.disp, h.bytes, &addr)) st = Status::ErrRmaRange;
  t->status = st;
  if (st != Status::Ok) refused(src, h, st);
  if (st == Status::Ok) {
    t->data = new (std::nothrow) char[want ? want : 1];
    t->owned = true;
    if (!t->data) t->status = Status::ErrNoMemory;
  }
  receiveData(w, t, t->status == Status::Ok ? t->data : nullptr,
              t->status == Status::Ok ? want : 0, accDataDone);
}

int service(Window& w) {
  int events = 0;
  if (!w.directRetry.empty()) events += directProgress(w);
  while (!w.readySlots.empty()) {
    HeaderSlot* s = w.readySlots.pop();
    handleHeader(w, s);
    core::requestRelease(s->req);
    s->req = nullptr;
    if (postSlot(s) != Status::Ok) RRT_WARN("rma: could not re-post a header receive");
    ++events;
  }
  while (!w.readyPuts.empty()) {
    TargetOp* t = w.readyPuts.pop();
    if (!t->dropped) sendAck(w, t->src, t->h.id, t->status);
    targetOpFree(t);
    ++events;
  }
  if (w.accReady > 0) {
    for (size_t src = 0; src < w.accQueue.size(); ++src) {
      auto& q = w.accQueue[src];
      while (!q.empty() && q.front()->ready) {
        TargetOp* t = q.front();
        q.pop_front();
        --w.accReady;
        if (!t->dropped) applyAcc(w, static_cast<int>(src), t->h, t->data, t->status);
        if (t->owned) delete[] t->data;
        targetOpFree(t);
        ++events;
      }
    }
  }
  return events;
}

}  // namespace

// Freed TargetOps kept for reuse: a put or accumulate whose payload follows its header (more
// than kRmaInlineMax bytes) takes one per operation without calling the allocator once warm.
namespace {
std::vector<TargetOp*>& freeOps() {
  static auto* v = new std::vector<TargetOp*>;  // never destroyed (finalize may run at exit)
  return *v;
}
constexpr size_t kFreeOpsKept = 256;
}  // namespace

TargetOp* targetOpAlloc() {
  auto& f = freeOps();
  if (f.empty()) return new TargetOp;
  TargetOp* t = f.back();
  f.pop_back();
  *t = TargetOp{};
  return t;
}

void targetOpFree(TargetOp* t) {
  auto& f = freeOps();
  if (f.size() < kFreeOpsKept) {
    if (f.capacity() == 0) f.reserve(kFreeOpsKept);
    f.push_back(t);
  } else {
    delete t;
  }
}

Status postSlots(Window& w) {
  for (int i = 0; i < kHeaderSlots; ++i) {
    w.slots.push_back(std::make_unique<HeaderSlot>());
    w.slots.back()->win = &w;
    RRT_TRY(postSlot(w.slots.back().get()));
  }
  return Status::Ok;
}

Status dropWaiting(Window& w) {
  if (!w.waiting) return Status::Ok;
  RRT_WARN("rma: window freed while operations wait for data their origins never sent");
  // cancel() completes an unmatched receive at once (its callback unlinks it), so walk from a
  // saved next.
  for (TargetOp* t = w.waiting; t;) {
    TargetOp* next = t->nextWaiting;
    (void)proto::cancel(t->req);
    t = next;
  }
  // Matched ones complete as their data arrives (or their origin fails); then every dropped op
  // is serviced (deleted, not applied or answered).
  Status st = core::waitFor([&w] { return w.waiting == nullptr; });
  Status s2 = core::waitFor([&w] { return !w.busy() && w.sendsInFlight == 0; });
  return st != Status::Ok ? st : s2;
}

void cancelSlots(Window& w) {
  for (auto& s : w.slots) {
    core::Request* r = s->req;
    if (!r) continue;
    r->onComplete = nullptr;
    if (!r->complete) (void)proto::cancel(r);
    if (r->complete) core::requestRelease(r);
    s->req = nullptr;
  }
  w.readySlots.clear();
  w.slots.clear();
}

int poll(void*) {
  if (gPolling) return 0;
  gPolling = true;
  int events = 0;
  const auto& t = windows();
  for (size_t i = 0; i < t.size(); ++i)
    if (Window* w = t[i]; w && w->busy()) events += service(*w);
  gPolling = false;
  return events;
}

void ensurePoller() {
  if (gPollerAdded) return;
  core::addPoller(poll, nullptr);
  gPollerAdded = true;
}

}  // namespace rrt::rma
