#include "runtime/transport/verbs/bounce_pool.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "runtime/core/log.h"

namespace rrt::transport::verbs {

BouncePool::~BouncePool() {
  if (mr_) ibv_dereg_mr(mr_);
  if (base_) munmap(base_, bytes_);
}

Status BouncePool::init(ibv_pd* pd, size_t count, size_t bufBytes) {
  bufBytes_ = (bufBytes + 63) & ~size_t{63};  // 64-byte aligned buffers
  count_ = count;
  bytes_ = bufBytes_ * count;
  void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::ErrNoMemory;
  base_ = static_cast<char*>(p);
  mr_ = ibv_reg_mr(pd, base_, bytes_, IBV_ACCESS_LOCAL_WRITE);
  if (!mr_) {
    RRT_WARN("verbs: registering %zu bounce bytes: %s", bytes_, strerror(errno));
    return Status::ErrTransport;
  }
  free_.reserve(count);
  for (size_t i = count; i-- > 0;) free_.push_back(static_cast<int32_t>(i));
  return Status::Ok;
}

}  // namespace rrt::transport::verbs
