// The node's shared-memory segment: a header line followed by one ring per ordered pair of
// local ranks.
//
// Lifecycle: the lowest local rank create()s it (shm_open O_EXCL, mode 0600, posix_fallocate so
// a too-small /dev/shm fails here rather than with SIGBUS later, every ring initialized, the
// magic stored last). After the PMIx fence every other local rank attach()es it, checking the
// magic, version, local size, ring size and file size. Each mapping increments `attached`;
// whoever brings it to the local size unlinks the name, so a crash afterwards leaves nothing in
// /dev/shm. The mapping itself lives until the Segment is destroyed.
//
// Layout:
//   bytes 0..63           SegmentHeader (below)
//   then, for each ordered pair (src, dst) of local indices with src != dst, at
//   kHeaderBytes + ringIndex(src, dst) * ringFootprint(ringBytes): that pair's ring (ring.h);
//   then, for each ordered pair (reader, owner), its table of split-copy slots (cma_split.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/status.h"
#include "runtime/transport/shm/cma_split.h"
#include "runtime/transport/shm/ring.h"

namespace rrt::transport::shm {

constexpr uint64_t kSegmentMagic = 0x7272742d73686d31ull;  // "rrt-shm1"
constexpr uint32_t kSegmentVersion = 2;  // 2: split-copy tables after the rings

struct alignas(64) SegmentHeader {
  std::atomic<uint64_t> magic;     // stored last by the creator (release)
  uint32_t version;
  uint32_t localSize;
  uint64_t ringBytes;
  uint64_t totalBytes;
  std::atomic<uint32_t> attached;  // processes that mapped it (the creator counts itself)
  int32_t creatorPid;
  uint8_t pad[24];
};
static_assert(sizeof(SegmentHeader) == 64, "the segment header is one cache line");
static_assert(offsetof(SegmentHeader, magic) == 0, "magic first");
static_assert(offsetof(SegmentHeader, attached) == 32, "attached in the header line");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must be lock-free");

constexpr size_t kHeaderBytes = sizeof(SegmentHeader);

// Index of the ring carrying src -> dst among the n * (n - 1) rings.
constexpr size_t ringIndex(int src, int dst, int n) {
  return static_cast<size_t>(src) * (n - 1) + (dst < src ? dst : dst - 1);
}

constexpr size_t segmentBytes(int localSize, size_t ringBytes) {
  return kHeaderBytes + static_cast<size_t>(localSize) * (localSize - 1) *
                            (ringFootprint(ringBytes) + kSplitTableBytes);
}

// "/rrt-<jobId>-n<leader>-shm": what shm_open takes (it appears as /dev/shm/rrt-<jobId>-n0-shm).
// leader, the node's lowest world rank, keeps the segments of one job's nodes apart where those
// nodes share a /dev/shm (containers or network-namespace hosts on one machine).
std::string segmentName(const std::string& jobId, int leader);

class Segment {
 public:
  Segment() = default;
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  // Creates, sizes and initializes the segment. A stale segment of the same name (a crashed
  // earlier job with the same id) is removed and replaced, with a warning.
  Status create(const std::string& name, int localSize, size_t ringBytes);
  // Maps an existing segment and checks it matches what this rank expects.
  Status attach(const std::string& name, int localSize, size_t ringBytes);
  // Counts this mapping; unlinks the name when it is the last expected one. Returns true when
  // this call unlinked it.
  bool countAttached(const std::string& name);
  // Maps the pages of the rings rank `me` writes to or reads from and brings their cells into
  // its cache, so the first lap of each ring runs as fast as the later ones (a minor fault per
  // page and a memory miss per cell before). Called at start, before any push.
  void prefaultRings(int me) const;

  void* ring(int src, int dst) const {
    return base_ + kHeaderBytes + ringIndex(src, dst, localSize_) * ringFootprint(ringBytes_);
  }
  // The split-copy slots `reader` asks `owner` to serve (cma_split.h).
  SplitSlot* splitTable(int reader, int owner) const {
    const size_t pairs = static_cast<size_t>(localSize_) * (localSize_ - 1);
    return reinterpret_cast<SplitSlot*>(base_ + kHeaderBytes + pairs * ringFootprint(ringBytes_) +
                                        ringIndex(reader, owner, localSize_) * kSplitTableBytes);
  }
  SegmentHeader* header() const { return reinterpret_cast<SegmentHeader*>(base_); }
  bool mapped() const { return base_ != nullptr; }

 private:
  Status mapFd(int fd, size_t bytes);

  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
  int localSize_ = 0;
  size_t ringBytes_ = 0;
};

}  // namespace rrt::transport::shm
