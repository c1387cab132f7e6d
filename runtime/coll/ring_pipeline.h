// The segmented ring shared by allreduce_ring.cc and reduce_scatter_ring.cc.
//
// p blocks (block b at byte offset off[b], len[b] bytes, element-aligned); a reduce-scatter
// ring of p-1 steps leaves rank r with block r fully reduced, and (allreduce) an allgather ring
// of p-1 more steps circulates the reduced blocks. Step k of the reduce-scatter sends block
// r-k-1 and receives block r-k-2; step k of the allgather sends block r-k and receives r-k-1.
//
// Pipelining: every block is cut into segments of s bytes (RRT_COLL_SEGMENT). Segment j of a
// step depends only on segment j of the previous step, so segment j+1 is on the wire while
// segment j is being reduced, and a reduced segment goes on to the next neighbour at once.
// Units (step, segment) are posted in lexicographic order on both sides of each link, which is
// what keeps messages of one tag matched in order. Per segment at most one send and one receive
// are in flight; received data alternates between two slots per segment (scratch 2 * max
// block). Commutative ops only (each block is combined in ring order, not rank order).
#pragma once

#include <vector>

#include "runtime/coll/task.h"

namespace rrt::coll {

struct RingLayout {
  std::vector<size_t> off, len;  // per block, bytes, relative to in / out
  const char* in = nullptr;      // the input (all blocks)
  char* out = nullptr;           // allgather: all blocks; else unused
  char* own = nullptr;           // where block r's result goes
  bool ownAliasesIn = false;     // own is in's block r: the last receive goes to a slot
  bool allgather = false;
};

class RingTask : public Task {
 public:
  using Task::Task;
  Status advance() override;

 protected:
  // Called once at the start; fills layout_ (or finishes the collective and returns Ok).
  virtual Status setup() = 0;
  // After the last unit (e.g. copy the own block out of a scratch buffer).
  virtual void finish() {}
  RingLayout layout_;

 private:
  size_t nseg(int block) const { return (layout_.len[static_cast<size_t>(block)] + seg_ - 1) / seg_; }
  size_t segLen(int block, size_t j) const;
  Status postUnit(int k, size_t j);
  void processRecv(int k, size_t j);
  int sendBlock(int k) const;
  int recvBlock(int k) const;

  enum class Phase { Start, Stream, Drain, Done };
  Phase phase_ = Phase::Start;
  size_t seg_ = 0, maxSeg_ = 0;
  int steps_ = 0;          // p - 1 or 2 (p - 1)
  int curStep_ = 0;        // cursor: the next unit to post
  size_t curSeg_ = 0;
  struct SegState {
    core::Request* send = nullptr;
    core::Request* recv = nullptr;
    int step = -1;         // the last unit posted for this segment
    bool processed = true; // its receive completed and was combined
  };
  std::vector<SegState> segs_;
  char* slots_ = nullptr;  // 2 * maxSeg_ segments of seg_ bytes
};

}  // namespace rrt::coll
