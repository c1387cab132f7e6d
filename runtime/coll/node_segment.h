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
// one's next call. waitAtLeast() is the only wait: it keeps rrt's progress running, and
// when the rank it waits for has died (looked at every 10 ms) it reports the peer to the
// protocol layer (whose failure policy then applies) and returns ErrProcFailed.
//
// Pieces: every algorithm on the segment moves its data in pieces numbered by one sequence
// that all ranks advance alike (sequence()); piece g lives in buffer g mod kBuffers of a slot.
// The rules that keep algorithms from overwriting what a peer still reads, whatever ran before
// on the communicator: a rank writes into its buffer of piece g only after waitBufferFree(g)
// (every rank's kDone covers piece g - kBuffers), and counts kDone for piece g only once it
// read everything of piece g it will ever read. kIn and kReduced say what the algorithm says.
//
// Peers' buffers: where rank 0 found at open that ranks may map each other's rrt_alloc_mem
// memory, a call may read a peer's input or output where it lies instead of
// a copy in the peer's slot. A rank says which of its buffers are shared in callBuffers(own,
// g) of the call's piece 0 g, written under the buffer rule (after waitBufferFree(g), before
// counting kIn for g), and read by peers before they count kDone for g.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/memory/shared_alloc.h"

namespace rrt::coll {

class Direct;

class NodeSegment {
 public:
  enum Counter { kIn = 0, kReduced = 1, kDone = 2 };
  static constexpr int kCounters = 3;
  static constexpr int kBuffers = 4;  // per slot, for pieces in turn

  // Collective over d's communicator (every rank calls it with the same slotBytes): Ok with
  // *out set, Ok with *out null when the segment could not be made on some rank (a warning
  // names why), or the error of the messages (a dead peer).
  static Status open(Direct& d, size_t slotBytes, std::unique_ptr<NodeSegment>* out);
  // The slot size open() is given for p ranks: RRT_COLL_SHM_SLOT within kMaxSegmentBytes.
  static size_t slotBytesFor(int p);
  ~NodeSegment();
  NodeSegment(const NodeSegment&) = delete;
  NodeSegment& operator=(const NodeSegment&) = delete;

  size_t slotBytes() const { return slotBytes_; }
  // Rank r's buffer of piece g: bufferBytes, 64-byte aligned.
  size_t bufferBytes() const { return bufferBytes_; }
  char* buffer(int r, uint64_t g) const {
    return slots_ + static_cast<size_t>(r) * slotBytes_ + g % kBuffers * bufferBytes_;
  }
  // Waits until no rank reads the own buffer of piece g any more (their kDone covers
  // g - kBuffers): Ok, or waitAtLeast's errors.
  Status waitBufferFree(uint64_t g) { return g < kBuffers ? Status::Ok : waitPeersDone(g - kBuffers + 1); }
  // Waits until every peer's kDone is at least v (e.g. a call's end, before the caller gets
  // back buffers peers read where they lie): Ok, or waitAtLeast's errors.
  Status waitPeersDone(uint64_t v) {
    for (int j = 0; j < size_; ++j)
      if (j != rank_) RRT_TRY(waitAtLeast(j, kDone, v));
    return Status::Ok;
  }

  uint64_t load(int r, int c) const { return counter(r, c).load(std::memory_order_acquire); }
  void store(int c, uint64_t v) { counter(rank_, c).store(v, std::memory_order_release); }
  // Waits until rank r's counter c is at least v: Ok, ErrProcFailed (r died), ErrInternal (r
  // marked itself failed), ErrTimeout.
  Status waitAtLeast(int r, int c, uint64_t v) {
    if (__builtin_expect(load(r, c) >= v, 1)) return Status::Ok;
    return waitSlow(r, c, v);
  }

  // The next unused value of the counters' common sequence: every rank advances it alike.
  uint64_t& sequence() { return sequence_; }

  // A call's shared buffers (memory::sharedFind; ino 0: not shared): its input and output.
  struct CallBuffers {
    memory::SharedRef in, out;
  };
  // Says which of this rank's buffers peers may read where they lie in the call whose piece 0
  // is g (call it once that piece's buffer is free, before counting kIn for it): in (inBytes)
  // and out (outBytes), each nullptr when the algorithm does not let peers read it; shared when
  // it is rrt_alloc_mem memory and ranks may map each other's. *sharedIn / *sharedOut: which are.
  void publish(uint64_t g, const void* in, size_t inBytes, const void* out, size_t outBytes,
               bool* sharedIn, bool* sharedOut);
  // Once peer j's kIn covers g + 1: where this rank reads j's published input and output
  // (nullptr: not shared), mapped on first use. ErrInternal, with this rank marked failed,
  // when j's memory cannot be mapped (rank 0 found at open that it can: fds or address space
  // ran out). mapPeers: every peer's, into per-rank arrays kept by the segment (no allocation).
  Status mapPeer(uint64_t g, int j, const char** in, const char** out);
  Status mapPeers(uint64_t g, const char* const** peerIn, const char* const** peerOut);
  // Room for a call's peer addresses, 2 per rank (mapPeers fills it).
  const char** peerAddresses() { return peerAddresses_.data(); }
  // Marks this rank failed in the segment (it cannot go on with the call, e.g. a peer's buffer
  // could not be mapped): every wait on it, now or in later calls, fails with ErrInternal
  // instead of waiting forever, and a rank whose wait fails so (or on a dead peer) marks itself
  // failed in turn. The segment serves no more calls after.
  void markFailed();
  // For a rank that fails a call while peers may read its buffers where they lie: marks it
  // failed, then waits until every peer either counted kDone up to done, failed, or died, so
  // that the caller may free the buffers when the call returns.
  void settle(uint64_t done);

 private:
  NodeSegment() = default;
  std::atomic<uint64_t>& counter(int r, int c) const;
  Status waitSlow(int r, int c, uint64_t v);
  CallBuffers& callBuffers(int r, uint64_t g) const;
  pid_t pid(int r) const;
  enum class Seen { kReached, kFailed, kDead };
  Status watch(int r, int c, uint64_t v, Seen* seen);

  char* base_ = nullptr;
  size_t bytes_ = 0;
  char* slots_ = nullptr;
  size_t slotBytes_ = 0;
  size_t bufferBytes_ = 0;
  int rank_ = 0;
  int size_ = 0;
  std::vector<int> worldRanks_;  // of the communicator's ranks, for failure reports
  uint64_t sequence_ = 0;
  bool peersMap_ = false;
  std::vector<const char*> peerAddresses_;
};

// The segment of d's communicator, for a call that puts up to callBytes into each rank's slot
// (a function of the call's arguments, alike on every rank). Made by the first call that wants
// one (NodeSegment::open, collective: every rank of the communicator calls this at the same
// point) and kept with the communicator; *out null when it could not be made. Calls of at most
// kSmallCallBytes get slots of kSmallSlotBytes, so that a communicator that only ever runs small
// collectives costs a fraction of a millisecond and a few pages; the first larger call replaces
// them, once, with slots of RRT_COLL_SHM_SLOT bytes, shrunk so that a segment stays within
// kMaxSegmentBytes (when that fails, the small segment stays). A size that failed is never
// tried again on the communicator.
constexpr size_t kMaxSegmentBytes = 16u << 20;
constexpr size_t kSmallSlotBytes = 64u << 10;
constexpr size_t kSmallCallBytes = kSmallSlotBytes / NodeSegment::kBuffers;
Status commNodeSegment(Direct& d, size_t callBytes, NodeSegment** out);

}  // namespace rrt::coll
