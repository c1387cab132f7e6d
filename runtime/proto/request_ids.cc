#include "runtime/proto/request_ids.h"

namespace rrt::proto {

uint64_t RequestIds::add(core::Request* r) {
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(Slot{});
    free_.reserve(slots_.capacity());
  }
  slots_[slot].req = r;
  return (static_cast<uint64_t>(slots_[slot].gen) << 32) | slot;
}

void RequestIds::remove(uint64_t id) {
  uint32_t slot = static_cast<uint32_t>(id);
  if (slot >= slots_.size() || slots_[slot].gen != static_cast<uint32_t>(id >> 32)) return;
  slots_[slot].req = nullptr;
  if (++slots_[slot].gen == 0) slots_[slot].gen = 1;
  free_.push_back(slot);
}

}  // namespace rrt::proto
