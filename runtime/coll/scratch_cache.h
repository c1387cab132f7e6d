// Scratch memory of collectives, kept across calls.
//
// Why: a collective's scratch buffer (the running sum of a reduce, a ring's segment slots) is
// as large as the message. Allocated per call, a large one comes back from malloc as fresh
// pages (mmap above glibc's threshold, or heap that free() trimmed), and the first touch of each
// page is a page fault: ~0.1 us on bare metal, 20-45 us in a guest under shadow paging, i.e.
// 5-12 ms for a 1 MiB reduce whose data moves in 0.3 ms. A cache keeps the pages mapped and
// touched: in steady state a collective allocates nothing.
//
// Contract
//   - One cache per communicator (engine.cc keeps it in comm.collState), destroyed with the
//     communicator (rrt_comm_free, rrt_finalize): the destructor frees every idle buffer.
//   - acquire() lends a buffer of at least `bytes` (64-byte aligned) to one task until it calls
//     release(); several tasks of one communicator (non-blocking collectives outstanding at once)
//     each hold their own. Best fit among the idle buffers, else a new one of the next power of
//     two, so that nearby sizes share buffers.
//   - Bounded: at most keepBytes and kKeepBuffers of idle buffers; release() frees the smallest
//     idle ones (the cheapest to fault in again) beyond that, and a buffer larger than keepBytes
//     is freed at once. keepBytes = 0 turns caching off (every buffer freed on release).
//   - Not thread-safe: the collective engine runs under one progress thread at a time.
//   - Every lent buffer is released before the cache is destroyed (a task ends before its
//     communicator is freed: it references the communicator too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rrt::coll {

class ScratchCache {
 public:
  // Idle buffers kept at most: a task holds up to three, a few tasks may run at once.
  static constexpr size_t kKeepBuffers = 8;

  struct Buffer {
    char* data = nullptr;
    size_t capacity = 0;
  };

  explicit ScratchCache(size_t keepBytes);
  ~ScratchCache();
  ScratchCache(const ScratchCache&) = delete;
  ScratchCache& operator=(const ScratchCache&) = delete;

  // A buffer of at least bytes (data == nullptr when out of memory). Never allocates when an
  // idle buffer fits.
  Buffer acquire(size_t bytes);
  // Gives back a buffer from acquire(); keeps it idle or frees it (bounds above).
  void release(Buffer b);

  uint64_t allocations() const { return allocations_; }  // buffers ever allocated
  size_t idleBuffers() const { return idle_.size(); }
  size_t idleBytes() const { return idleBytes_; }
  size_t lentBuffers() const { return lent_; }
  // Bytes of every cache's buffers still allocated (idle or lent), process-wide.
  static size_t liveBytes();

 private:
  void evictSmallest();
  size_t keepBytes_;
  std::vector<Buffer> idle_;  // reserved for kKeepBuffers + 1: release() never allocates
  size_t idleBytes_ = 0;
  size_t lent_ = 0;
  uint64_t allocations_ = 0;
};

}  // namespace rrt::coll
