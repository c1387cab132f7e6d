// Direct forms' messages and scratch. See direct.h.
#include "runtime/coll/direct.h"

#include "runtime/core/progress.h"

namespace rrt::coll {

Direct::~Direct() {
  // After a timed-out wait a request may still land in the scratch: it is left to leak.
  if (abandoned_) return;
  ScratchCache* cache = nScratch_ ? &commScratch(comm_) : nullptr;
  for (size_t i = 0; i < nScratch_; ++i) cache->release(scratch_[i]);
}

Status Direct::track(Status posted, core::Request* r) {
  if (posted != Status::Ok) return posted;
  if (r->complete) {  // an eager send: nothing to wait for
    const Status s = static_cast<Status>(r->status.error);
    core::requestRelease(r);
    return s;
  }
  inFlight_.push(r);
  return Status::Ok;
}

Status Direct::send(int peer, const void* buf, size_t bytes) {
  core::Request* r = nullptr;
  Status s = p2p().isend(comm_, comm_.collCtx(), buf, bytes, peer, tag_, 0, &r);
  return track(s, r);
}

Status Direct::recv(int peer, void* buf, size_t bytes) {
  core::Request* r = nullptr;
  Status s = p2p().irecv(comm_, comm_.collCtx(), buf, bytes, peer, tag_, &r);
  return track(s, r);
}

Status Direct::wait() {
  const size_t n = inFlight_.size();
  if (n == 0) return Status::Ok;
  size_t complete = 0;  // inFlight_[0, complete) are known complete
  Status s = core::waitFor([this, n, &complete] {
    while (complete < n && inFlight_[complete]->complete) ++complete;
    return complete == n;
  });
  if (s != Status::Ok) {  // timed out: the requests stay with rrt
    abandoned_ = true;
    inFlight_.clear();
    return s;
  }
  for (size_t i = 0; i < n; ++i) {
    core::Request* r = inFlight_[i];
    if (s == Status::Ok) s = static_cast<Status>(r->status.error);
    core::requestRelease(r);
  }
  inFlight_.clear();
  return s;
}

Status Direct::finish(Status s) {
  const Status w = wait();
  return s != Status::Ok ? s : w;
}

char* Direct::scratch(size_t bytes) {
  if (nScratch_ == kMaxScratch) return nullptr;
  ScratchCache::Buffer b = commScratch(comm_).acquire(bytes);
  if (b.data) scratch_[nScratch_++] = b;
  return b.data;
}

}  // namespace rrt::coll
