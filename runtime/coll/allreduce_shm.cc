// Allreduce through the communicator's shared-memory segment (node_segment.h): blocking calls
// of a communicator whose ranks all share memory (one node). Commutative ops only.
//
// The vector is cut into p regions, region j reduced by rank j alone (so every rank ends with
// the same bits), and the regions are walked together in pieces of up to s bytes each. Piece k
// on rank r:
//   copy in   copy piece k of every other region of the input into the own slot's buffer
//             k mod D; count "in".
//   reduce    once every rank's "in" covers k: in L1-sized chunks, copy the input's own region
//             into the own slot, fold in every other rank's copy of it (from their slots),
//             copy the result to the output; count "reduced".
//   copy out  as each rank's "reduced" covers k, copy its region's piece from its slot to the
//             output.
// Copy-in runs one piece ahead of the rest, so that a rank that is early copies instead of
// waiting. No buffer is written while a peer may still read it, with D >= 2 and no counter of
// its own: the peers' reads of buffer k+1-D are pieces <= k-1, and a rank copying piece k+1 in
// has seen every "reduced" of k-1 (so their folds of k-1 are over), while its fold of k+1
// waits for every "in" of k+1, which each rank counts only after its copy-out of k-1.
// Every wait keeps rrt's progress running and fails with ErrProcFailed when the rank waited
// for dies.
//
// Cost per rank: n copied into the own slot, (p-1)/p n loaded from peers' slots and reduced,
// (p-1)/p n loaded from peers' slots and copied out, 2 (p-1) counter waits per piece of p s
// bytes and no message. A ring moves the same 2 (p-1)/p n through rings or the kernel (CMA pins every
// page: about half the rate of a load, bench/ring_bound.c) and pays 2 (p-1) alpha; the copy-in
// is this algorithm's price. On this machine it wins from 256K at 2 ranks, 16K at 3, 8K at 4
// and 8 (tuning/shm-2vcpu.txt).
#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_segment.h"
#include "runtime/coll/patterns.h"
#include "runtime/coll/selection.h"

namespace rrt::coll {
namespace {

enum Counter { kIn = 0, kReduced = 1 };
static_assert(NodeSegment::kCounters >= 2, "two counters per rank");
constexpr int kDepth = 4;                       // slot buffers per rank (at least 2: above)
constexpr size_t kChunkBytes = 8 * 1024;        // of the own region's fold (L1)
constexpr size_t kMaxSegment = 16u << 20;       // bytes of one communicator's segment at most

// The piece size s of every region: each rank's slot (RRT_COLL_SHM_SLOT, shrunk so that the
// segment of p slots stays within kMaxSegment) holds kDepth pieces of p regions; a multiple of
// 64 bytes. Why a large slot: a slot line that a peer still holds in its cache costs a
// cross-core invalidation when it is written again, and a buffer reused soon is in that state
// (2 ranks, 4M: copy-in and fold 2-3x slower with 128K slots than with 2M).
size_t blockBytes(int p) {
  const size_t pp = static_cast<size_t>(p);
  const size_t slot = std::min(shmSlotBytes(), kMaxSegment / pp);
  return std::max<size_t>(64, slot / (kDepth * pp) / 64 * 64);
}

class ShmAllreduce {
 public:
  ShmAllreduce(Direct& d, const CollArgs& a, NodeSegment& seg, size_t s)
      : a_(a), seg_(seg), p_(d.size()), r_(d.rank()), s_(s), e_(s / a.typeSize),
        in_(static_cast<const char*>(inPlace(a.sbuf) ? a.rbuf : a.sbuf)),
        out_(static_cast<char*>(a.rbuf)) {}

  Status run() {
    const size_t largest = blockSize(a_.count, static_cast<size_t>(p_), 0);
    const uint64_t pieces = (largest + e_ - 1) / e_;
    base_ = seg_.sequence();
    seg_.sequence() += pieces;
    RRT_TRY(copyIn(0));
    for (uint64_t k = 0; k < pieces; ++k) {
      if (k + 1 < pieces) RRT_TRY(copyIn(k + 1));
      RRT_TRY(reduce(k));
      RRT_TRY(copyOut(k));
    }
    return Status::Ok;
  }

 private:
  // Region j's part of piece k: first element (of the whole vector) and element count.
  size_t first(int j, uint64_t k) const {
    return blockOffset(a_.count, static_cast<size_t>(p_), static_cast<size_t>(j)) + k * e_;
  }
  size_t len(int j, uint64_t k) const {
    const size_t region = blockSize(a_.count, static_cast<size_t>(p_), static_cast<size_t>(j));
    return k * e_ >= region ? 0 : std::min(e_, region - k * e_);
  }
  // Rank j's copy of region i's part of piece k.
  char* block(int j, uint64_t k, int i) const {
    const uint64_t g = base_ + k;
    return seg_.slot(j) + (g % kDepth * static_cast<size_t>(p_) + static_cast<size_t>(i)) * s_;
  }

  Status copyIn(uint64_t k) {
    const uint64_t g = base_ + k;
    const size_t ts = a_.typeSize;
    for (int i = 0; i < p_; ++i)
      if (i != r_) Direct::copy(block(r_, k, i), in_ + first(i, k) * ts, len(i, k) * ts);
    seg_.store(kIn, g + 1);
    return Status::Ok;
  }

  Status reduce(uint64_t k) {
    const uint64_t g = base_ + k;
    for (int j = 0; j < p_; ++j)
      if (j != r_) RRT_TRY(seg_.waitAtLeast(j, kIn, g + 1));
    // In L1-sized chunks: the input's copy into the slot, the folds and the copy out stay in
    // L1, so the own region costs one read of the input and one write of the output.
    const size_t ts = a_.typeSize, n = len(r_, k);
    const size_t chunk = std::max<size_t>(1, kChunkBytes / ts);
    char* const acc = block(r_, k, r_);
    const char* const src = in_ + first(r_, k) * ts;
    char* const dst = out_ + first(r_, k) * ts;
    for (size_t c = 0; c < n; c += chunk) {
      const size_t m = std::min(chunk, n - c), off = c * ts;
      Direct::copy(acc + off, src + off, m * ts);
      for (int j = 0; j < p_; ++j)
        if (j != r_) a_.reducer.apply(block(j, k, r_) + off, acc + off, m);
      Direct::copy(dst + off, acc + off, m * ts);
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
  const char* const in_;
  char* const out_;
  uint64_t base_ = 0;  // sequence of this call's piece 0
};

}  // namespace

Status allreduceShmDirect(Direct& d, const CollArgs& a) {
  const int p = d.size();
  if (p == 1) {
    Direct::copy(a.rbuf, inPlace(a.sbuf) ? a.rbuf : a.sbuf, a.count * a.typeSize);
    return Status::Ok;
  }
  const size_t s = blockBytes(p);
  NodeSegment* seg = nullptr;
  RRT_TRY(commNodeSegment(d, static_cast<size_t>(kDepth) * p * s, &seg));
  // Without a segment (every rank learnt the same), or with elements larger than a block:
  // the same messages on every rank, by recursive doubling.
  if (!seg || a.typeSize > s) return allreduceRecursiveDoublingDirect(d, a);
  return ShmAllreduce(d, a, *seg, s).run();
}

}  // namespace rrt::coll
