// A communicator's shared-memory segment for collectives whose ranks all live on one node
// (shm_reduction.h): one slot of memory per rank that every rank of the communicator can load
// from, and per rank a few monotonic counters that say how far it got.
//
// Why: a rank of the p2p algorithms cannot address its peers' memory. Every byte it gets from
// a peer is copied through a ring or by CMA, which pins the pages in the kernel at about half
// the rate a plain load from shared memory reaches (bench/ring_bound.c). With a segment, a rank
// copies its input in once and reduces straight from its peers' slots.
//
// Lifecycle: made on a communicator's first call that wants it (open(), collective over comm,
// through the call's own messages): rank 0 creates /dev/shm/rrt-<jobId>-c<its world rank>-<n>
// (O_EXCL, mode 0600, posix_fallocate so a full /dev/shm fails here and not with SIGBUS later)
// and sends the name to every rank; each maps it, writes its pid and answers; rank 0 unlinks the
// name once every rank answered (so a crash afterwards leaves nothing behind) and sends the
// verdict. When any rank could not map it, every rank learns so from the verdict and open()
// gives all of them nullptr: they agree to do without. The mapping lives until the communicator
// is freed.
//
// Counters: counter(rank, c) is written only by its rank (release) and read by the others
// (acquire), each in its own cache line. They never go back, so a value names one point of
// the communicator's whole history of calls and a slow rank can never be confused with a fast
// one's next call. waitAtLeast() is the only wait: it keeps rrt's progress engine running, and
// when the rank it waits for has died (looked at every 10 ms) it reports the peer to the
// protocol layer (whose failure policy then applies) and returns ErrProcFailed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/core/status.h"

namespace rrt::coll {

class Direct;

class NodeSegment {
 public:
  static constexpr int kCounters = 3;  // per rank; what they count is the algorithm's business

  // Collective over d's communicator (every rank calls it with the same slotBytes): Ok with
  // *out set, Ok with *out null when the segment could not be made on some rank (a warning
  // names why), or the error of the messages (a dead peer).
  static Status open(Direct& d, size_t slotBytes, std::unique_ptr<NodeSegment>* out);
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  size_t slotBytes() const { return slotBytes_; }
  // Rank r's slot: slotBytes, 4096-aligned.
  char* slot(int r) const { return slots_ + static_cast<size_t>(r) * slotBytes_; }

  uint64_t load(int r, int c) const { return counter(r, c).load(std::memory_order_acquire); }
  void store(int c, uint64_t v) { counter(rank_, c).store(v, std::memory_order_release); }
  // Waits until rank r's counter c is at least v: Ok, ErrProcFailed (r died), ErrTimeout.
  Status waitAtLeast(int r, int c, uint64_t v) {
    if (__builtin_expect(load(r, c) >= v, 1)) return Status::Ok;
    return waitSlow(r, c, v);
  }

  // The next unused value of the counters' common sequence: every rank advances it alike.
  uint64_t& sequence() { return sequence_; }

 private:
  NodeSegment() = default;
  std::atomic<uint64_t>& counter(int r, int c) const;
  Status waitSlow(int r, int c, uint64_t v);

  char* base_ = nullptr;
  size_t bytes_ = 0;
  char* slots_ = nullptr;
  size_t slotBytes_ = 0;
  int rank_ = 0;
  int size_ = 0;
  std::vector<int> worldRanks_;  // of the communicator's ranks, for failure reports
  uint64_t sequence_ = 0;
};

// The segment of d's communicator, made by its first call (NodeSegment::open with slotBytes,
// collective: every rank of the communicator calls this at the same point) and kept with the
// communicator; *out null when it could not be made (then never tried again on it).
Status commNodeSegment(Direct& d, size_t slotBytes, NodeSegment** out);

}  // namespace rrt::coll
