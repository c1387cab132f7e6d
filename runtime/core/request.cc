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

}  // namespace rrt::core
