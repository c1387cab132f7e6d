// The shared-memory reduction pipeline (shm_reduction.h): pieces, counters and waits.
#include "runtime/coll/shm_reduction.h"

#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_segment.h"
#include "runtime/coll/patterns.h"
#include "runtime/coll/selection.h"

namespace rrt::coll {
namespace {

constexpr int kIn = NodeSegment::kIn, kReduced = NodeSegment::kReduced, kDone = NodeSegment::kDone;
// The own region's fold goes in chunks of this many bytes, which stay in L2 between its
// passes. Measured (2 vCPUs, float sum, medians of 3 rotated rounds, us, 8K / 128K chunks):
// 2 ranks 1M 102.7 / 79.7, 4M 441 / 320; with rrt_alloc_mem buffers 1M 66.6 / 43.0; 3 ranks
// 2M 433 / 392; 4 ranks 4M 840 / 760; equal below 256K and for reduce-scatter. L1-sized chunks
// (2K-8K) lost the most: 2K 161 us at 2 ranks 1M.
constexpr size_t kChunkBytes = 128 * 1024;

// A shared output (rrt_alloc_mem) is the accumulator that peers copy the result from, which
// saves writing the result twice; but the next call writes the same lines again while peers
// may still hold them (a cross-core invalidation per line), where the slot buffers rotate.
// Measured (2 vCPUs, tuning/shm-2vcpu.txt): it pays from 1M at 2 ranks and from 16M at 4, so
// from n >= 256K p^2 (RRT_COLL_SHM_SHARED_OUTPUT); below, the result goes through the slot as
// for private buffers.

// Why large slots (RRT_COLL_SHM_SLOT, 2M): a slot line that a peer still holds in its cache
// costs a cross-core invalidation when it is written again, and a buffer reused soon is in
// that state (2 ranks, 4M: copy-in and fold 2-3x slower with 128K slots than with 2M).

class Pipeline {
 public:
  Pipeline(Direct& d, const CollArgs& a, NodeSegment& seg, size_t s, ShmResult result)
      : a_(a), seg_(seg), p_(d.size()), r_(d.rank()), s_(s), e_(s / a.typeSize),
        scatter_(result == ShmResult::kOwnRegion), everyRank_(result == ShmResult::kEveryRank),
        gets_(result == ShmResult::kEveryRank || (result == ShmResult::kRoot && a.root == d.rank())),
        in_(static_cast<const char*>(inPlace(a.sbuf) ? a.rbuf : a.sbuf)),
        out_(static_cast<char*>(a.rbuf)) {}

  Status run(size_t inBytes) {
    for (int j = 0; j < p_; ++j) largest_ = std::max(largest_, regionLen(j));
    const uint64_t pieces = (largest_ + e_ - 1) / e_;
    base_ = seg_.sequence();
    seg_.sequence() += pieces;
    RRT_TRY(seg_.waitBufferFree(base_));
    publish(inBytes);
    const Status s = pipeline(pieces);
    // Failed with a shared buffer: peers may still read it; the caller may free it once we
    // return.
    if (s != Status::Ok && (sharedIn_ || sharedOut_)) seg_.settle(base_ + pieces);
    return s;
  }

 private:
  Status pipeline(uint64_t pieces) {
    const uint64_t end = base_ + pieces;
    // Pieces 0 and 1 in before waiting for the peers: an early rank copies instead of waiting.
    // (A rank whose input is shared copies nothing whatever the geometry below.)
    const uint64_t copied = std::min<uint64_t>(pieces, 2);
    for (uint64_t k = 0; k < copied; ++k) RRT_TRY(copyIn(k));
    for (int j = 0; j < p_; ++j)
      if (j != r_) RRT_TRY(seg_.waitAtLeast(j, kIn, base_ + 1));
    RRT_TRY(seg_.mapPeers(base_, &peerIn_, &peerOut_));
    // Every rank's input shared (every rank sees the same): nothing goes through the slots but
    // the accumulators, so a piece of the own region may fill a whole slot buffer: p times
    // fewer pieces, and as many fewer rounds of waits (what 4 ranks on 2 cores pay for most).
    // The call keeps its sequence numbers; the counters jump to their end when it is done.
    direct_ = sharedIn_;
    for (int j = 0; j < p_; ++j) direct_ = direct_ && (j == r_ || peerIn_[j]);
    if (direct_) {
      s_ = seg_.bufferBytes() / 64 * 64;
      e_ = s_ / a_.typeSize;
      pieces = (largest_ + e_ - 1) / e_;
    }
    for (uint64_t k = 0; k < pieces; ++k) {
      if (k + 1 < pieces && k + 1 >= copied) RRT_TRY(copyIn(k + 1));
      RRT_TRY(fold(k));
      if (gets_) RRT_TRY(copyOut(k));
      seg_.store(kDone, base_ + k + 1);
    }
    if (direct_) {
      seg_.store(kIn, end);
      seg_.store(kReduced, end);
      seg_.store(kDone, end);
    }
    // Peers read a shared input or output where it lies: it is the caller's again only once
    // every peer is done with the call.
    return sharedIn_ || sharedOut_ ? seg_.waitPeersDone(end) : Status::Ok;
  }

  // Region j of the vector, in elements: its first element and its length.
  size_t regionOff(int j) const {
    const size_t i = static_cast<size_t>(j);
    return scatter_ ? a_.recvOffs[i] / a_.typeSize : blockOffset(a_.count, static_cast<size_t>(p_), i);
  }
  size_t regionLen(int j) const {
    const size_t i = static_cast<size_t>(j);
    return scatter_ ? a_.recvBytes[i] / a_.typeSize : blockSize(a_.count, static_cast<size_t>(p_), i);
  }
  // Region j's part of piece k: first element (of the whole vector) and element count.
  size_t first(int j, uint64_t k) const { return regionOff(j) + k * e_; }
  size_t len(int j, uint64_t k) const {
    const size_t region = regionLen(j);
    return k * e_ >= region ? 0 : std::min(e_, region - k * e_);
  }
  // Rank j's copy of region i's part of piece k.
  char* block(int j, uint64_t k, int i) const {
    return seg_.buffer(j, base_ + k) + static_cast<size_t>(i) * s_;
  }
  // Rank j's accumulator of its own region's piece k (a whole buffer when direct).
  char* accumulator(int j, uint64_t k) const { return direct_ ? seg_.buffer(j, base_ + k) : block(j, k, j); }

  // Says which of this rank's buffers peers may read where they lie (node_segment.h), in the
  // line of the call's piece 0 (its buffer is free: run()). Not a reduce-scatter's input in
  // place: its output, written from the start, covers other ranks' regions of it before they
  // read them. An output only where every rank gets the result, and from the size where it
  // pays.
  void publish(size_t inBytes) {
    const size_t n = a_.count * a_.typeSize, p = static_cast<size_t>(p_);
    const bool shareOut = everyRank_ && n >= shmSharedOutputBytes() * p * p;
    seg_.publish(base_, scatter_ && in_ == out_ ? nullptr : in_, inBytes, shareOut ? out_ : nullptr, n,
                 &sharedIn_, &sharedOut_);
  }

  Status copyIn(uint64_t k) {
    const uint64_t g = base_ + k;
    RRT_TRY(seg_.waitBufferFree(g));
    const size_t ts = a_.typeSize;
    if (!sharedIn_)
      for (int i = 0; i < p_; ++i)
        if (i != r_) Direct::copy(block(r_, k, i), in_ + first(i, k) * ts, len(i, k) * ts);
    seg_.store(kIn, g + 1);
    return Status::Ok;
  }

  // Rank j's copy of this rank's region in piece k: its input where it lies, or its slot.
  const char* peerPart(int j, uint64_t k) const {
    return peerIn_[j] ? peerIn_[j] + first(r_, k) * a_.typeSize : block(j, k, r_);
  }

  Status fold(uint64_t k) {
    const uint64_t g = base_ + k;
    for (int j = 0; j < p_; ++j)
      if (j != r_) RRT_TRY(seg_.waitAtLeast(j, kIn, g + 1));
    // In chunks that stay in cache: the input's copy into the slot, the folds and the copy
    // out, so the own region costs one read of the input and (one write of the output). A
    // shared output is the accumulator itself: peers read the result there.
    const size_t ts = a_.typeSize, n = len(r_, k);
    const size_t chunk = std::max<size_t>(1, kChunkBytes / ts);
    char* const acc = sharedOut_ ? out_ + first(r_, k) * ts : accumulator(r_, k);
    const char* const src = in_ + first(r_, k) * ts;
    // In place, a reduce-scatter's output (the start of the input) only ever covers what was
    // copied in or folded already: piece k of every region lies at or after element k e.
    char* dst = scatter_ ? out_ + k * e_ * ts : gets_ ? out_ + first(r_, k) * ts : nullptr;
    if (dst == acc) dst = nullptr;
    for (size_t c = 0; c < n; c += chunk) {
      const size_t m = std::min(chunk, n - c), off = c * ts;
      if (acc != src) Direct::copy(acc + off, src + off, m * ts);
      for (int j = 0; j < p_; ++j)
        if (j != r_) a_.reducer.apply(peerPart(j, k) + off, acc + off, m);
      if (dst) Direct::copy(dst + off, acc + off, m * ts);
    }
    seg_.store(kReduced, g + 1);
    return Status::Ok;
  }

  Status copyOut(uint64_t k) {
    const uint64_t g = base_ + k;
    const size_t ts = a_.typeSize;
    for (int step = 1; step < p_; ++step) {  // from the right neighbour on: spread the loads
      const int j = (r_ + step) % p_;
      RRT_TRY(seg_.waitAtLeast(j, kReduced, g + 1));
      const char* from = peerOut_[j] ? peerOut_[j] + first(j, k) * ts : accumulator(j, k);
      Direct::copy(out_ + first(j, k) * ts, from, len(j, k) * ts);
    }
    return Status::Ok;
  }

  const CollArgs& a_;
  NodeSegment& seg_;
  const int p_, r_;
  size_t s_, e_;  // piece bytes of a region (slot block, or buffer when direct_) and elements
  const bool scatter_;  // reduce-scatter: regions are the receive counts, the own one is the result
  const bool everyRank_;  // allreduce
  const bool gets_;     // this rank gets the whole result (allreduce, or the root of a reduce)
  const char* const in_;
  char* const out_;
  uint64_t base_ = 0;   // sequence of this call's piece 0
  size_t largest_ = 0;  // elements of the largest region
  bool direct_ = false;  // every input shared: pieces of a whole buffer, no copy-in
  bool sharedIn_ = false, sharedOut_ = false;  // peers read them where they lie
  const char* const* peerIn_ = nullptr;         // per rank: its input here, or nullptr
  const char* const* peerOut_ = nullptr;        // per rank: its output here, or nullptr
};

}  // namespace

Status shmReduction(Direct& d, const CollArgs& a, ShmResult result) {
  const int p = d.size();
  if (p == 1) {
    Direct::copy(a.rbuf, inPlace(a.sbuf) ? a.rbuf : a.sbuf,
                 result == ShmResult::kOwnRegion ? a.recvBytes[0] : a.count * a.typeSize);
    return Status::Ok;
  }
  NodeSegment* seg = nullptr;
  const size_t bytes = result == ShmResult::kOwnRegion ? a.recvOffs.back() + a.recvBytes.back()
                                                       : a.count * a.typeSize;
  RRT_TRY(commNodeSegment(d, bytes, &seg));
  const size_t s = seg ? seg->bufferBytes() / static_cast<size_t>(p) / 64 * 64 : 0;
  if (!seg || a.typeSize > s) {
    switch (result) {
      case ShmResult::kEveryRank: return allreduceRecursiveDoublingDirect(d, a);
      case ShmResult::kRoot: return reduceBinomialDirect(d, a);
      case ShmResult::kOwnRegion: return reduceScatterRecursiveHalvingDirect(d, a);
    }
  }
  return Pipeline(d, a, *seg, s, result).run(bytes);
}

}  // namespace rrt::coll
