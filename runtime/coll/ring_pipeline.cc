// See ring_pipeline.h.
#include "runtime/coll/ring_pipeline.h"

#include "runtime/coll/patterns.h"
#include "runtime/coll/selection.h"

namespace rrt::coll {

int RingTask::sendBlock(int k) const {
  const int p = size(), r = rank();
  return k < p - 1 ? mod(r - k - 1, p) : mod(r - (k - (p - 1)), p);
}
int RingTask::recvBlock(int k) const {
  const int p = size(), r = rank();
  return k < p - 1 ? mod(r - k - 2, p) : mod(r - (k - (p - 1)) - 1, p);
}

size_t RingTask::segLen(int block, size_t j) const {
  const size_t len = layout_.len[static_cast<size_t>(block)];
  return j * seg_ + seg_ <= len ? seg_ : len - j * seg_;
}

Status RingTask::postUnit(int k, size_t j) {
  const int p = size();
  const bool rs = k < p - 1;
  SegState& st = segs_[j];
  char* slot = slots_ + (2 * j + static_cast<size_t>(k % 2)) * seg_;
  char* prevSlot = slots_ + (2 * j + static_cast<size_t>((k + 1) % 2)) * seg_;
  const int rb = recvBlock(k), sb = sendBlock(k);
  st.step = k;
  if (j < nseg(rb)) {
    const size_t o = layout_.off[static_cast<size_t>(rb)] + j * seg_;
    char* dst;
    if (!rs) dst = layout_.out + o;                            // allgather: in place
    else if (k < p - 2 || layout_.ownAliasesIn) dst = slot;    // to be combined
    else dst = layout_.own + j * seg_;                         // last step: straight to own
    st.processed = false;
    RRT_TRY(recv(mod(rank() - 1, p), dst, segLen(rb, j), &st.recv));
  }
  if (j < nseg(sb)) {
    const size_t o = layout_.off[static_cast<size_t>(sb)] + j * seg_;
    const char* src;
    if (k == 0) src = layout_.in + o;                          // raw input
    else if (rs) src = prevSlot;                               // combined at step k-1
    else if (k == p - 1) src = layout_.own + j * seg_;         // own reduced block
    else src = layout_.out + o;                                // received at step k-1
    RRT_TRY(send((rank() + 1) % p, src, segLen(sb, j), &st.send));
  }
  return Status::Ok;
}

void RingTask::processRecv(int k, size_t j) {
  const int p = size();
  if (k >= p - 1) return;  // allgather: nothing to combine
  const int rb = recvBlock(k);
  const size_t n = segLen(rb, j), count = n / args_.typeSize;
  const char* mine = layout_.in + layout_.off[static_cast<size_t>(rb)] + j * seg_;
  char* slot = slots_ + (2 * j + static_cast<size_t>(k % 2)) * seg_;
  if (k < p - 2) {
    reduce(mine, slot, count);
  } else if (layout_.ownAliasesIn) {
    reduce(slot, layout_.own + j * seg_, count);
  } else {
    reduce(mine, layout_.own + j * seg_, count);
  }
}

Status RingTask::advance() {
  for (;;) {
    switch (phase_) {
      case Phase::Start: {
        RRT_TRY(setup());
        if (size() == 1) return Status::Ok;
        const size_t ts = args_.typeSize;
        seg_ = segmentBytes() / ts * ts;
        if (seg_ == 0) seg_ = ts;
        size_t maxLen = 0;
        for (size_t l : layout_.len) maxLen = l > maxLen ? l : maxLen;
        maxSeg_ = (maxLen + seg_ - 1) / seg_;
        if (maxSeg_ == 0) return Status::Ok;
        if (!(slots_ = scratch(2 * maxSeg_ * seg_))) return Status::ErrNoMemory;
        segs_.assign(maxSeg_, SegState{});
        steps_ = (size() - 1) * (layout_.allgather ? 2 : 1);
        phase_ = Phase::Stream;
        break;
      }
      case Phase::Stream: {
        bool moved = true;
        while (moved) {
          moved = false;
          if (error_ != Status::Ok) {
            phase_ = Phase::Drain;
            break;
          }
          // Combine whatever arrived (any order).
          for (size_t j = 0; j < maxSeg_; ++j) {
            SegState& st = segs_[j];
            if (!st.processed && done(st.recv)) {
              processRecv(st.step, j);
              st.processed = true;
              moved = true;
            }
          }
          // Post units in order while their segment is ready.
          while (curStep_ < steps_) {
            SegState& st = segs_[curSeg_];
            if (!st.processed || !done(st.send)) break;
            RRT_TRY(postUnit(curStep_, curSeg_));
            moved = true;
            if (++curSeg_ == maxSeg_) {
              curSeg_ = 0;
              ++curStep_;
            }
          }
        }
        if (phase_ == Phase::Drain) break;
        if (curStep_ < steps_) return Status::InProgress;
        for (SegState& st : segs_)
          if (!st.processed) return Status::InProgress;
        phase_ = Phase::Drain;
        break;
      }
      case Phase::Drain:
        for (SegState& st : segs_) {
          (void)done(st.send);
          (void)done(st.recv);
        }
        if (!idle()) return Status::InProgress;
        RRT_TRY(error_);
        finish();
        phase_ = Phase::Done;
        return Status::Ok;
      case Phase::Done:
        return Status::Ok;
    }
  }
}

}  // namespace rrt::coll
