// Pre-registered bounce buffers: one slab, one memory region, fixed-size buffers handed out by
// index from a free stack. The receive side posts them to the SRQ; the send side copies AM
// payloads that do not fit inline into them. get/put never allocate or register.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/status.h"

namespace rrt::transport::verbs {

class BouncePool {
 public:
  BouncePool() = default;
  BouncePool(const BouncePool&) = delete;
  BouncePool& operator=(const BouncePool&) = delete;
  ~BouncePool();

  Status init(ibv_pd* pd, size_t count, size_t bufBytes);
  // A free buffer's index, or -1 when none is free.
  int32_t take() {
    if (free_.empty()) return -1;
    int32_t i = free_.back();
    free_.pop_back();
    return i;
  }
  void give(int32_t i) { free_.push_back(i); }  // never grows: capacity reserved in init
  char* at(int32_t i) const { return base_ + static_cast<size_t>(i) * bufBytes_; }
  uint32_t lkey() const { return mr_->lkey; }
  size_t bufBytes() const { return bufBytes_; }
  size_t count() const { return count_; }
  size_t freeCount() const { return free_.size(); }

 private:
  char* base_ = nullptr;
  size_t bytes_ = 0, bufBytes_ = 0, count_ = 0;
  ibv_mr* mr_ = nullptr;
  std::vector<int32_t> free_;
};

}  // namespace rrt::transport::verbs
