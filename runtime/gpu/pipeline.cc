#include "runtime/gpu/pipeline.h"

#include <algorithm>

namespace rrt::gpu {

Pipeline::~Pipeline() {
  for (Event e : events_)
    if (e) d_->eventDestroy(e);
}

size_t Pipeline::chunkFor(size_t bytes, size_t configured) {
  if (configured) return configured;
  // Four or more chunks in flight for mid sizes, 4 MiB chunks for the largest.
  constexpr size_t kMin = 512 * 1024, kMax = 4 * 1024 * 1024;
  return std::clamp(bytes / 4, kMin, kMax) & ~size_t{4095};
}

Status Pipeline::start(const Plan& plan, Stream stream) {
  if (!plan.device || !plan.host || plan.chunk == 0 || plan.hostBytes < plan.chunk ||
      (plan.dir == Direction::ToDevice && !plan.transfer))
    return Status::ErrArg;
  plan_ = plan;
  stream_ = stream;
  n_ = (plan.bytes + plan.chunk - 1) / plan.chunk;
  // A host buffer holding the whole message has a slot per chunk (the last one may be short).
  slots_ = plan.hostBytes >= plan.bytes ? std::max<size_t>(n_, 1) : plan.hostBytes / plan.chunk;
  window_ = std::min({std::max<size_t>(plan.depth, 1), slots_, kMaxDepth});
  issued_ = delivered_ = released_ = 0;
  failure_ = Status::Ok;
  state_.fill(Slot::Free);
  for (size_t i = 0; i < window_; ++i)
    if (!events_[i]) RRT_TRY(d_->eventCreate(&events_[i]));
  return Status::Ok;
}

// Issues what the window allows: ToHost copies device -> slot; ToDevice asks for the slot's data
// and copies it slot -> device.
Status Pipeline::issue() {
  while (issued_ < n_ && issued_ < released_ + window_) {
    const size_t i = issued_, n = lenOf(i), off = i * plan_.chunk;
    char* slot = slotAddr(i);
    char* dev = static_cast<char*>(plan_.device) + off;
    if (plan_.dir == Direction::ToHost) {
      RRT_TRY(d_->memcpyAsync(slot, dev, n, stream_));
    } else {
      Status st = plan_.transfer(plan_.arg, i, slot, off, n);
      if (st == Status::NoResource) return Status::Ok;
      if (st != Status::Ok) return st;
      RRT_TRY(d_->memcpyAsync(dev, slot, n, stream_));
    }
    RRT_TRY(d_->eventRecord(events_[i % window_], stream_));
    state_[i % window_] = Slot::Copying;
    ++issued_;
  }
  return Status::Ok;
}

Status Pipeline::progress() {
  if (failure_ != Status::Ok) return failure_;
  for (;;) {
    const size_t before = issued_ + delivered_ + released_;
    Status st = issue();
    if (st != Status::Ok) return failure_ = st;
    if (plan_.dir == Direction::ToHost) {
      // Hand on copied chunks in order.
      while (delivered_ < issued_) {
        const size_t i = delivered_;
        Status q = d_->eventQuery(events_[i % window_]);
        if (q == Status::InProgress) break;
        if (q != Status::Ok) return failure_ = q;
        Status t = plan_.transfer ? plan_.transfer(plan_.arg, i, slotAddr(i), i * plan_.chunk, lenOf(i))
                                  : Status::Ok;
        if (t == Status::NoResource) break;
        if (t == Status::InProgress) {
          state_[i % window_] = Slot::Transferring;
        } else if (t == Status::Ok) {
          state_[i % window_] = Slot::Done;
        } else {
          return failure_ = t;
        }
        ++delivered_;
      }
      while (released_ < delivered_ && state_[released_ % window_] == Slot::Done) {
        state_[released_ % window_] = Slot::Free;
        ++released_;
      }
    } else {
      while (released_ < issued_) {
        Status q = d_->eventQuery(events_[released_ % window_]);
        if (q == Status::InProgress) break;
        if (q != Status::Ok) return failure_ = q;
        state_[released_ % window_] = Slot::Free;
        delivered_ = ++released_;
      }
    }
    if (released_ == n_) return Status::Ok;
    if (issued_ + delivered_ + released_ == before) return Status::InProgress;
  }
}

void Pipeline::transferDone(size_t index) {
  if (index >= released_ && index < delivered_ && state_[index % window_] == Slot::Transferring)
    state_[index % window_] = Slot::Done;
}

Status Pipeline::run() {
  for (;;) {
    Status st = progress();
    if (st != Status::InProgress) return st;
  }
}

}  // namespace rrt::gpu
