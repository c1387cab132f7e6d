#include "runtime/core/request.h"

#include <new>
#include <vector>

namespace rrt::core {
namespace {

// Free list of requests; slabs are never returned to malloc (requests are reused).
struct Pool {
  static constexpr size_t kSlab = 256;
  List<Request, &Request::hook> free;
  std::vector<Request*> slabs;
  ~Pool() {
    for (Request* s : slabs) delete[] s;
  }
  void grow() {
    Request* slab = new Request[kSlab];
    slabs.push_back(slab);
    for (size_t i = 0; i < kSlab; ++i) free.pushBack(&slab[i]);
  }
};

Pool& pool() {
  static Pool* p = new Pool;  // lives until exit: requests may be released late
  return *p;
}

}  // namespace

Request* requestAlloc(ReqKind kind) {
  Pool& p = pool();
  if (p.free.empty()) p.grow();
  Request* r = p.free.popFront();
  // Reset to the member defaults (default-init, not value-init: the rkey bytes stay as they
  // are instead of being zeroed on every message).
  new (r) Request;
  r->magic = kRequestMagic;
  r->kind = kind;
  return r;
}

void requestRelease(Request* r) {
  r->magic = 0;
  r->kind = ReqKind::Free;
  pool().free.pushFront(r);  // LIFO: the next alloc gets a cache-warm request
}

void requestComplete(Request* r, Status s) {
  if (failed(s) && r->status.error == RRT_SUCCESS) r->status.error = static_cast<int>(s);
  r->complete = true;
  if (r->onComplete) r->onComplete(r, r->onCompleteArg);
  if (r->userFreed) requestRelease(r);
}

}  // namespace rrt::core
