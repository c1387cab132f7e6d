// Host-wide registry of the software RDMA device: one shared-memory file per user,
// /dev/shm/softrdma-<uid>, mapped by every process that opens the device.
// Contract: QPNs are unique host-wide among live QPs and resolve to the owning pid; memory keys
// (lkey == rkey) come from one host-wide counter, so a key from another process never names a
// local MR by accident. Slots of processes that died are reclaimed lazily. Lock-free (atomics in
// shared memory); safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <sys/types.h>

namespace rrt::tests::softrdma {

class Registry {
 public:
  static constexpr uint32_t kSlots = 1 << 16;

  // Maps (creating if needed) the registry; dies if /dev/shm is unusable.
  static Registry& instance();

  uint32_t allocQpn(pid_t owner);
  void releaseQpn(uint32_t qpn);
  // Owning pid of a live QPN, or 0.
  pid_t lookupQpn(uint32_t qpn) const;
  uint32_t allocKey();

 private:
  struct Slot {
    std::atomic<uint32_t> qpn;  // 0: free
    std::atomic<int32_t> pid;
  };
  struct Shared {
    uint32_t magic;
    std::atomic<uint32_t> nextQpn;
    std::atomic<uint32_t> nextKey;
    uint32_t reserved;
    Slot slots[kSlots];
  };
  static_assert(std::atomic<uint32_t>::is_always_lock_free);

  explicit Registry(Shared* shared) : shared_(shared) {}
  Shared* shared_;
};

}  // namespace rrt::tests::softrdma
