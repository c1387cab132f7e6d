// Windows: the handle table, collective creation and free, dynamic attach / detach, and the
// fire-and-forget sends both sides use.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "runtime/coll/coll.h"
#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"
#include "runtime/rma/window.h"

namespace rrt::rma {
namespace {

// Never destroyed: rrt_finalize may run from an atexit handler registered before the first
// window, after static destructors registered later have run.
std::vector<Window*>& table() {
  static auto* t = new std::vector<Window*>;
  return *t;
}

void freeAligned(char* p) { std::free(p); }

struct OwnedSend {
  Window* w;
  char* data;
};

void ownedSendDone(core::Request*, void* arg) {
  auto* s = static_cast<OwnedSend*>(arg);
  --s->w->sendsInFlight;
  delete[] s->data;
  delete s;
}

}  // namespace

Status barrier(Window& w) {
  coll::bindProtoP2p();
  coll::CollArgs a;
  a.kind = coll::CollKind::Barrier;
  return coll::run(*w.comm, std::move(a));
}

const std::vector<Window*>& windows() { return table(); }

Window* lookup(rrt_win_t handle) {
  auto& t = table();
  if (handle < 0 || static_cast<size_t>(handle) >= t.size()) return nullptr;
  return t[static_cast<size_t>(handle)];
}

Status sendCopy(Window& w, int dst, int tag, const void* data, size_t len) {
  proto::Comm& c = *w.comm;
  if (proto::engine().trySendInline(c, c.ctx, data, len, dst, tag) == Status::Ok)
    return Status::Ok;
  char* copy = new char[len ? len : 1];
  std::memcpy(copy, data, len);
  return sendFrom(w, dst, tag, copy, len, copy);
}

Status sendFrom(Window& w, int dst, int tag, const void* buf, size_t len, char* own) {
  proto::Comm& c = *w.comm;
  core::Request* r = nullptr;
  Status st = proto::isend(c, c.ctx, buf, len, dst, tag, 0, &r);
  if (st != Status::Ok) {
    delete[] own;
    return st;
  }
  if (r->complete) {
    core::requestRelease(r);
    delete[] own;
    return Status::Ok;
  }
  ++w.sendsInFlight;
  r->onComplete = ownedSendDone;
  r->onCompleteArg = new OwnedSend{&w, own};
  r->userFreed = true;
  return Status::Ok;
}

Status create(proto::Comm& parent, Kind kind, void* base, size_t size, int dispUnit,
              Window** out) {
  *out = nullptr;
  proto::Comm* dup = nullptr;
  RRT_TRY(proto::commDup(parent, &dup));
  auto* w = new Window;
  w->comm = dup;
  w->kind = kind;
  w->dispUnit = kind == Kind::Dynamic ? 1 : dispUnit;
  w->size = kind == Kind::Dynamic ? 0 : size;
  if (kind == Kind::Allocate) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, size ? size : 1) != 0) {
      (void)proto::commFree(dup->handle);
      delete w;
      return Status::ErrNoMemory;
    }
    w->owned = std::unique_ptr<char[], void (*)(char*)>(static_cast<char*>(p), freeAligned);
    w->base = static_cast<char*>(p);
  } else if (kind == Kind::Create || kind == Kind::Shared) {
    w->base = static_cast<char*>(base);
  }
  const size_t n = static_cast<size_t>(dup->size);
  w->inFlight.assign(n, 0);
  w->lockedNocheck.assign(n, 0);
  w->locked.assign(n, 0);
  w->accQueue.resize(n);
  w->postsFrom.assign(n, 0);
  w->completesFrom.assign(n, 0);
  w->sharedBy.assign(n, 0);
  ensurePoller();
  Status st = postSlots(*w);
  if (st != Status::Ok) {
    cancelSlots(*w);
    (void)proto::commFree(dup->handle);
    delete w;
    return st;
  }
  table().push_back(w);
  w->handle = static_cast<rrt_win_t>(table().size() - 1);
  // Nobody may address a rank before its header receives are posted: the allgather of the
  // direct path's keys is also that barrier.
  st = directSetup(*w);
  if (st != Status::Ok) {
    (void)free(w);
    return st;
  }
  *out = w;
  return Status::Ok;
}

Status attach(Window& w, void* base, size_t size) {
  if (w.kind != Kind::Dynamic) return Status::ErrRmaSync;
  if (size > 0 && base == nullptr) return Status::ErrArg;
  w.regions.push_back(Region{reinterpret_cast<uintptr_t>(base), size});
  return Status::Ok;
}

Status detach(Window& w, const void* base) {
  if (w.kind != Kind::Dynamic) return Status::ErrRmaSync;
  auto it = std::find_if(w.regions.begin(), w.regions.end(), [base](const Region& r) {
    return r.addr == reinterpret_cast<uintptr_t>(base);
  });
  if (it == w.regions.end()) return Status::ErrArg;
  w.regions.erase(it);
  return Status::Ok;
}

Status free(Window* w) {
  // Our own operations first, then everyone's: after the barrier no rank sends to us again.
  // (quiet(), not !busy(): accumulates queued behind one whose data a peer never sends must
  // not hold free() forever; dropWaiting() ends them.)
  Status st = flush(*w, -1);
  Status s2 = core::waitFor([w] { return w->quiet(); });
  if (st == Status::Ok) st = s2;
  s2 = barrier(*w);
  if (st == Status::Ok) st = s2;
  s2 = core::waitFor([w] { return w->quiet(); });
  if (st == Status::Ok) st = s2;
  s2 = dropWaiting(*w);
  if (st == Status::Ok) st = s2;
  directRelease(*w);  // after the barrier: every origin's direct ops to us are complete
  cancelSlots(*w);
  for (auto& q : w->accQueue)
    for (TargetOp* t : q) {
      if (t->owned) delete[] t->data;
      targetOpFree(t);
    }
  table()[static_cast<size_t>(w->handle)] = nullptr;
  (void)proto::commFree(w->comm->handle);
  delete w;
  return st;
}

void finalizeAll() {
  for (Window*& w : table()) {
    if (!w) continue;
    directRelease(*w);
    cancelSlots(*w);
    delete w;  // its communicator goes with commFinalizeAll
    w = nullptr;
  }
  table().clear();
}

}  // namespace rrt::rma
