// Alltoall through the communicator's shared-memory segment (node_segment.h): blocking calls
// of a communicator whose ranks all share memory (one node).
//
// A slot buffer holds p sub-blocks of s bytes, one per destination. By the schedule of
// shm_exchange.h, a rank copies piece k of every block bound for another rank into its
// sub-block of its buffer of piece k, and rank j copies its sub-block from there to block r of
// its output. In place needs no copy aside: piece k of a block is copied in before piece k of
// the same block of the output is written.
//
// Cost per rank: (p-1) b copied into the own slot, (p-1) b loaded from the peers' slots,
// p-1 counter waits per piece and no message. The scattered exchange and pairwise move the
// same (p-1) b once, by CMA: one copy, but the kernel pins every page (about a quarter of a
// load's rate here, 64K at a time) and every message pays alpha. Measured in
// tuning/shm-2vcpu.txt.
#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/shm_exchange.h"

namespace rrt::coll {

Status alltoallShmDirect(Direct& d, const CollArgs& a) {
  const int p = d.size(), r = d.rank();
  const size_t b = a.blockBytes;
  char* const out = static_cast<char*>(a.rbuf);
  const char* const in = inPlace(a.sbuf) ? out : static_cast<const char*>(a.sbuf);
  Direct::copy(out + static_cast<size_t>(r) * b, in + static_cast<size_t>(r) * b, b);
  if (p == 1 || b == 0) return Status::Ok;
  NodeSegment* seg = nullptr;
  RRT_TRY(commNodeSegment(d, static_cast<size_t>(p) * b, &seg));
  // Without a segment (every rank learnt the same) or with buffers too small for p
  // sub-blocks (a tiny RRT_COLL_SHM_SLOT): by messages.
  const size_t s = seg ? seg->bufferBytes() / static_cast<size_t>(p) / 64 * 64 : 0;
  if (s == 0) return alltoallScatteredDirect(d, a);
  auto len = [&](uint64_t k) { return std::min(s, b - k * s); };
  auto block = [&](const char* base, int j, uint64_t k) { return base + static_cast<size_t>(j) * b + k * s; };
  return shmExchange(
      *seg, p, r, (b + s - 1) / s,
      [&](uint64_t k, char* buf) {
        for (int j = 0; j < p; ++j)
          if (j != r) Direct::copy(buf + static_cast<size_t>(j) * s, block(in, j, k), len(k));
      },
      [&](int j, uint64_t k, const char* buf) {
        Direct::copy(const_cast<char*>(block(out, j, k)), buf + static_cast<size_t>(r) * s, len(k));
      });
}

}  // namespace rrt::coll
