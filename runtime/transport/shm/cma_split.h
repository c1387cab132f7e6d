// Cooperative single copy of a large CMA get or put (RRT_SHM_CMA_SPLIT): the reader asks the
// owner of the source to write the tail into the reader's buffer (process_vm_writev) while the
// reader reads the head (process_vm_readv), so two cores copy at once. A put is the mirror
// image (kind kSplitPut): the writer asks the owner of the destination to read the tail from
// the writer's buffer (process_vm_readv) while it writes the head; "reader" below means the
// rank that asked, "owner" the peer. Measured on the 2-vCPU
// development VM (fork, 1 and 4 MiB, both processes polling, under load): the split copy took
// 0.1-0.75x the time of one process_vm_readv of the whole message.
//
// The request lives in a slot of a table in the node's segment, one table per ordered pair
// (reader, owner); only the reader allocates and frees its table's slots. A slot's state:
//   Free -> Asked      reader: src, dst, len written, then the state (release); an AM
//                      (kSplitAmId) tells the owner which slot.
//   Asked -> Claimed   owner, by compare-exchange, then it writes; -> Done or Failed (release).
//   Asked -> Taken     reader, by compare-exchange, when it finished the head and the owner has
//                      not claimed the tail yet (the owner is busy elsewhere or not scheduled):
//                      the reader reads the tail itself, so it never waits on an owner that
//                      does not poll. The owner that sees Taken (or Free) later does nothing.
//   Done/Failed/Taken -> Free   reader, once it has what it needs.
// The owner never writes after the reader's get completed: completion needs Done or Taken.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/transport/transport.h"

namespace rrt::transport::shm {

enum SplitState : uint32_t {
  kSplitFree = 0,
  kSplitAsked = 1,
  kSplitClaimed = 2,
  kSplitTaken = 3,
  kSplitDone = 4,
  kSplitFailed = 5,
};

enum SplitKind : uint32_t {
  kSplitGet = 0,  // the owner writes [src, +len) of its memory to dst in the reader's
  kSplitPut = 1,  // the owner reads [src, +len) of the reader's memory into dst in its own
};

struct alignas(64) SplitSlot {
  std::atomic<uint32_t> state;
  int32_t status;  // the owner's Status when Failed
  uint64_t src;    // get: in the owner's address space; put: in the reader's
  uint64_t dst;    // get: in the reader's; put: in the owner's
  uint64_t len;
  uint32_t kind;   // SplitKind
};
static_assert(sizeof(SplitSlot) == 64, "one cache line a slot");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must be lock-free");

constexpr int kSplitSlots = 8;  // concurrent split copies per ordered pair; more go unsplit
constexpr size_t kSplitTableBytes = kSplitSlots * sizeof(SplitSlot);
constexpr AmId kSplitAmId = kTransportAmIds;  // shm's own AM: a uint32_t slot index

}  // namespace rrt::transport::shm
