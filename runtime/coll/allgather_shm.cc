// Allgather and allgatherv through the communicator's shared-memory segment (node_segment.h):
// blocking calls of a communicator whose ranks all share memory (one node).
//
// Each rank's block is walked in pieces of one slot buffer, by the schedule of shm_exchange.h:
// a rank copies piece k of its block into its buffer, and every peer copies it from there to
// its place in the output.
//
// Cost per rank: b copied into the own slot (and once into the own place of the output unless
// in place), (p-1) b loaded from the peers' slots, p-1 counter waits per piece and no message.
// A ring or the scattered exchange moves the same (p-1) b through the rings (two copies) or
// the kernel (CMA, pinning every page) and pays (p-1) alpha. Measured in tuning/shm-2vcpu.txt.
// With the output in rrt_alloc_mem memory (large calls), peers copy each rank's block from its
// output instead: no copy-in.
#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/blocks.h"
#include "runtime/coll/selection.h"
#include "runtime/coll/shm_exchange.h"

namespace rrt::coll {

Status allgatherShmDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const Blocks b = Blocks::of(a);  // allgatherv: each rank's own count and displacement
  char* const out = static_cast<char*>(a.rbuf);
  const char* const own = inPlace(a.sbuf) ? out + b.off(r) : static_cast<const char*>(a.sbuf);
  Direct::copy(out + b.off(r), own, b.len(r));
  if (p == 1) return Status::Ok;
  size_t largest = 0;
  for (int j = 0; j < p; ++j) largest = std::max(largest, b.len(j));
  NodeSegment* seg = nullptr;
  RRT_TRY(commNodeSegment(d, largest, &seg));
  if (!seg) return allgatherRingDirect(d, a);  // every rank learnt the same
  const size_t s = seg->bufferBytes();
  // Piece k of rank j's block: bytes (none past its end).
  auto len = [&](int j, uint64_t k) { return k * s >= b.len(j) ? 0 : std::min(s, b.len(j) - k * s); };
  // The own block where it lies (the output's own place): peers may read it there when it is
  // rrt_alloc_mem memory, for blocks from 4 RRT_COLL_SHM_SHARED_OUTPUT (1M): below, the next
  // call's copy into the own place writes lines the peers still hold, which can cost more than
  // the copy-in saves (2 ranks, medians of rotated rounds, shared / private, us: 256K blocks 61
  // / 34; 1M 89 / 134 and 93 / 81; 2M 157 / 202; 4 ranks: 512K 147 / 196, 1M 407 / 546).
  const ShmExchangeShare share{out + b.off(r), b.len(r), s};
  const bool shared = largest >= 4 * shmSharedOutputBytes();
  return shmExchange(
      *seg, p, r, (largest + s - 1) / s,
      [&](uint64_t k, char* buf) { Direct::copy(buf, own + k * s, len(r, k)); },
      [&](int j, uint64_t k, const char* src) { Direct::copy(out + b.off(j) + k * s, src, len(j, k)); },
      shared ? &share : nullptr);
}

}  // namespace rrt::coll
