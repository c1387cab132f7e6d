// The shared-memory reduction pipeline (shm_reduction.h): pieces, counters and waits.
#include "runtime/coll/shm_reduction.h"

#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_segment.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

constexpr int kIn = NodeSegment::kIn, kReduced = NodeSegment::kReduced, kDone = NodeSegment::kDone;
constexpr size_t kChunkBytes = 8 * 1024;  // of the own region's fold (L1)

// Why large slots (RRT_COLL_SHM_SLOT, 2M): a slot line that a peer still holds in its cache
// costs a cross-core invalidation when it is written again, and a buffer reused soon is in
// that state (2 ranks, 4M: copy-in and fold 2-3x slower with 128K slots than with 2M).

class Pipeline {
 public:
  Pipeline(Direct& d, const CollArgs& a, NodeSegment& seg, size_t s, ShmResult result)
      : a_(a), seg_(seg), p_(d.size()), r_(d.rank()), s_(s), e_(s / a.typeSize),
        scatter_(result == ShmResult::kOwnRegion),
        gets_(result == ShmResult::kEveryRank || (result == ShmResult::kRoot && a.root == d.rank())),
        in_(static_cast<const char*>(inPlace(a.sbuf) ? a.rbuf : a.sbuf)),
        out_(static_cast<char*>(a.rbuf)) {}

  Status run() {
    size_t largest = 0;
    for (int j = 0; j < p_; ++j) largest = std::max(largest, regionLen(j));
    const uint64_t pieces = (largest + e_ - 1) / e_;
    base_ = seg_.sequence();
    seg_.sequence() += pieces;
    RRT_TRY(copyIn(0));
    for (uint64_t k = 0; k < pieces; ++k) {
      if (k + 1 < pieces) RRT_TRY(copyIn(k + 1));
      RRT_TRY(fold(k));
      if (gets_) RRT_TRY(copyOut(k));
      seg_.store(kDone, base_ + k + 1);
    }
    return Status::Ok;
  }

 private:
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

  Status copyIn(uint64_t k) {
    const uint64_t g = base_ + k;
    RRT_TRY(seg_.waitBufferFree(g));
    const size_t ts = a_.typeSize;
    for (int i = 0; i < p_; ++i)
      if (i != r_) Direct::copy(block(r_, k, i), in_ + first(i, k) * ts, len(i, k) * ts);
    seg_.store(kIn, g + 1);
    return Status::Ok;
  }

  Status fold(uint64_t k) {
    const uint64_t g = base_ + k;
    for (int j = 0; j < p_; ++j)
      if (j != r_) RRT_TRY(seg_.waitAtLeast(j, kIn, g + 1));
    // In L1-sized chunks: the input's copy into the slot, the folds and the copy out stay in
    // L1, so the own region costs one read of the input and (one write of the output).
    const size_t ts = a_.typeSize, n = len(r_, k);
    const size_t chunk = std::max<size_t>(1, kChunkBytes / ts);
    char* const acc = block(r_, k, r_);
    const char* const src = in_ + first(r_, k) * ts;
    // In place, a reduce-scatter's output (the start of the input) only ever covers what was
    // copied in or folded already: piece k of every region lies at or after element k e.
    char* const dst = scatter_ ? out_ + k * e_ * ts : gets_ ? out_ + first(r_, k) * ts : nullptr;
    for (size_t c = 0; c < n; c += chunk) {
      const size_t m = std::min(chunk, n - c), off = c * ts;
      Direct::copy(acc + off, src + off, m * ts);
      for (int j = 0; j < p_; ++j)
        if (j != r_) a_.reducer.apply(block(j, k, r_) + off, acc + off, m);
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
      Direct::copy(out_ + first(j, k) * ts, block(j, k, j), len(j, k) * ts);
    }
    return Status::Ok;
  }

  const CollArgs& a_;
  NodeSegment& seg_;
  const int p_, r_;
  const size_t s_, e_;  // piece bytes of a region (slot block) and elements in it
  const bool scatter_;  // reduce-scatter: regions are the receive counts, the own one is the result
  const bool gets_;     // this rank gets the whole result (allreduce, or the root of a reduce)
  const char* const in_;
  char* const out_;
  uint64_t base_ = 0;  // sequence of this call's piece 0
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
  return Pipeline(d, a, *seg, s, result).run();
}

}  // namespace rrt::coll
