// Request ids for the wire: a rendezvous or synchronous send names its request to the peer by
// an id, never by a pointer, so that a malformed or stale id from a peer is rejected instead
// of dereferenced. An id is (slot index, generation); a slot is reused with a new generation.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/request.h"

namespace rrt::proto {

class RequestIds {
 public:
  uint64_t add(core::Request* r);
  // The request for id, or nullptr if the id is unknown or stale.
  core::Request* find(uint64_t id) const {
    uint32_t slot = static_cast<uint32_t>(id);
    if (slot >= slots_.size() || slots_[slot].gen != static_cast<uint32_t>(id >> 32)) return nullptr;
    return slots_[slot].req;
  }
  void remove(uint64_t id);
  // Calls f(request) for every live entry (failure handling).
  template <typename F>
  void forEach(F&& f) const {
    for (const Slot& s : slots_)
      if (s.req) f(s.req);
  }

 private:
  struct Slot {
    core::Request* req = nullptr;
    uint32_t gen = 1;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

}  // namespace rrt::proto
