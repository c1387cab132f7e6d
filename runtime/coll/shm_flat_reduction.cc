// Allreduce and reduce of small vectors through the communicator's shared-memory segment
// (node_segment.h): blocking calls of a communicator whose ranks all share memory (one node).
//
// Every rank copies its input into its slot, piece by piece; once every rank's "in" covers a
// piece, each rank that gets the result (all of them, or the root) reduces all p copies of it
// into its output, in rank order from the right (x_0 op (x_1 op (... op x_{p-1}))): the order
// MPI defines, so non-commutative ops are served too, and every rank gets the same bits.
//
// Cost per rank: n copied into the own slot, p n loaded and (p-1) n reduced where the result
// goes, one counter wait per peer per piece and no message. Against recursive doubling
// (log p alpha + log p n (beta + gamma)) one round of waits instead of log p exchanges; against
// the pipeline of shm_reduction.h one round instead of three, at p n instead of 2 (p-1)/p n
// loads: a win for small vectors only. Measured in tuning/shm-2vcpu.txt.
#include <algorithm>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/node_segment.h"

namespace rrt::coll {
namespace {

Status shmFlatReduction(Direct& d, const CollArgs& a, bool gets) {
  const int p = d.size(), r = d.rank();
  const size_t ts = a.typeSize;
  const char* const in = static_cast<const char*>(inPlace(a.sbuf) ? a.rbuf : a.sbuf);
  char* const out = static_cast<char*>(a.rbuf);
  if (p == 1) {
    if (gets) Direct::copy(out, in, a.count * ts);
    return Status::Ok;
  }
  NodeSegment* seg = nullptr;
  RRT_TRY(commNodeSegment(d, a.count * ts, &seg));
  const size_t e = seg ? seg->bufferBytes() / ts : 0;  // elements per piece
  if (e == 0)  // no segment (every rank learnt the same), or elements larger than a buffer
    return a.kind == CollKind::Allreduce ? allreduceRecursiveDoublingDirect(d, a)
                                         : reduceBinomialDirect(d, a);
  const uint64_t pieces = (a.count + e - 1) / e;
  const uint64_t base = seg->sequence();
  seg->sequence() += pieces;
  for (uint64_t k = 0; k < pieces; ++k) {
    const uint64_t g = base + k;
    const size_t m = std::min(e, a.count - k * e), off = k * e * ts;
    RRT_TRY(seg->waitBufferFree(g));
    Direct::copy(seg->buffer(r, g), in + off, m * ts);
    seg->store(NodeSegment::kIn, g + 1);
    if (gets) {  // in place: this piece of the input is in the slot already
      for (int j = 0; j < p; ++j)
        if (j != r) RRT_TRY(seg->waitAtLeast(j, NodeSegment::kIn, g + 1));
      Direct::copy(out + off, seg->buffer(p - 1, g), m * ts);
      for (int j = p - 2; j >= 0; --j) a.reducer.apply(seg->buffer(j, g), out + off, m);
    }
    seg->store(NodeSegment::kDone, g + 1);  // (a reduce's non-root reads nothing: it goes on)
  }
  return Status::Ok;
}

}  // namespace

Status allreduceShmFlatDirect(Direct& d, const CollArgs& a) { return shmFlatReduction(d, a, true); }

Status reduceShmFlatDirect(Direct& d, const CollArgs& a) {
  return shmFlatReduction(d, a, d.rank() == a.root);
}

}  // namespace rrt::coll
