#include "runtime/core/request.h"

#include <new>
#include <vector>

namespace rrt::core {
namespace {

constexpr size_t kSlab = 256;

}  // namespace

namespace detail {

List<Request, &Request::hook> gFreeRequests;
void (*gCommRelease)(Request* r) = [](Request*) {};

// Slabs live until exit (requests may be released late, and are reused, never freed).
void growRequests() {
  Request* slab = new Request[kSlab];
  for (size_t i = 0; i < kSlab; ++i) gFreeRequests.pushBack(&slab[i]);
}

}  // namespace detail

void requestComplete(Request* r, Status s) {
  if (failed(s) && r->status.error == RRT_SUCCESS) r->status.error = static_cast<int>(s);
  r->complete = true;
  if (r->onComplete) r->onComplete(r, r->onCompleteArg);
  if (r->userFreed) requestRelease(r);
}

}  // namespace rrt::core
