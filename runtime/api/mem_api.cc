// Memory: rrt_alloc_mem / rrt_free_mem, memory the node's other ranks can map
// (runtime/memory/shared_alloc.h).
#include <rrt/rrt.h>

#include "runtime/core/log.h"
#include "runtime/memory/shared_alloc.h"

using namespace rrt;

extern "C" {

int rrt_alloc_mem(size_t size, void* baseptr) {
  if (!baseptr) {
    RRT_WARN("rrt_alloc_mem: baseptr is NULL");
    return RRT_ERR_ARG;
  }
  return toC(memory::sharedAlloc(size, static_cast<void**>(baseptr)));
}

int rrt_free_mem(void* base) {
  const Status s = memory::sharedFree(base);
  if (s != Status::Ok) RRT_WARN("rrt_free_mem: %p is not memory from rrt_alloc_mem", base);
  return toC(s);
}

}  // extern "C"
