// A verbs memory registration as the transport hands it out: the protocol's MemHandle, the
// ibv_mr, and the cache entry it came from (host: memory::RegCache; device: GdrRegistrations).
#pragma once

#include <infiniband/verbs.h>

#include "runtime/memory/reg_cache.h"
#include "runtime/transport/transport.h"

namespace rrt::transport::verbs {

struct VerbsMr final : MemHandle {
  ibv_mr* mr = nullptr;
  memory::RegEntry* entry = nullptr;
  bool device = false;  // GPU memory (GPUDirect RDMA), from GdrRegistrations
};

}  // namespace rrt::transport::verbs
