// Direct forms: a blocking collective run as straight-line code on the p2p seam, without a
// Task, a user request or the engine's poller.
//
// Why: a small blocking collective is all per-call overhead, and a task's is larger than its
// instruction count suggests. 2 ranks, 8 B bcast from rank 0 a million times (the receiver
// keeps up): 0.20-0.23 us per call through a task, 0.10 through the direct form (rrt_send /
// rrt_recv: 0.07). Driving the same task synchronously (no request, no poller) saved nothing,
// so the cost is the task itself. OSU-style at 2 ranks: barrier 0.57 -> 0.47 us, reduce 8-32 B
// 0.54-0.58 -> 0.48, allreduce 8-256 B 0.63-0.80 -> 0.55-0.73 (tuning/shm-2vcpu.txt).
// MPICH and Open MPI split their collectives the same way: blocking algorithms on blocking
// point-to-point, schedules (our tasks) for the non-blocking ones.
//
// Contract
//   - An algorithm may have a direct form (Algorithm::direct, selection.h): the same messages
//     in the same order as its task, so that a rank in the direct form and one running the
//     task of the same algorithm match (they never meet today: one call is blocking or not on
//     every rank, but nothing depends on that). coll::run() takes it unless a buffer the rank
//     touches is device memory (device_stage.h: hasDeviceBuffer, one memory-type lookup per
//     buffer with GPU support on, none without): those take the task path, which stages them
//     or runs on the device.
//   - Steps as in a task: post receives and sends, then wait() for all of them. A send that is
//     complete at post (eager) is released at once; only what is in flight is kept.
//   - Errors: the first failed request's status. finish() waits for whatever is still in
//     flight (it references the caller's buffers) before returning; a wait that times out
//     (RRT_TIMEOUT) leaves its requests with rrt, as every blocking call does.
//   - Scratch memory comes from the communicator's cache and goes back when the Direct dies.
#pragma once

#include <cstddef>
#include <cstring>

#include "runtime/coll/coll.h"
#include "runtime/coll/scratch_cache.h"
#include "runtime/coll/task.h"

namespace rrt::coll {

class Direct {
 public:
  Direct(proto::Comm& comm, int tag) : comm_(comm), tag_(tag) {}
  ~Direct();
  Direct(const Direct&) = delete;
  Direct& operator=(const Direct&) = delete;

  proto::Comm& comm() const { return comm_; }
  int rank() const { return comm_.rank; }
  int size() const { return comm_.size; }

  // Posts a message of this collective; wait() completes it.
  Status send(int peer, const void* buf, size_t bytes);
  Status recv(int peer, void* buf, size_t bytes);
  // Waits until every posted message is complete: Ok, or the first error.
  Status wait();
  // The collective's outcome: s (the form's result) or, when s is Ok, what the messages still
  // in flight end with. Called once, last.
  Status finish(Status s);

  // memcpy that takes what a collective's arguments allow: n == 0 with null pointers, dst == src.
  static void copy(void* dst, const void* src, size_t n) {
    if (n && dst != src) std::memcpy(dst, src, n);
  }

  // A buffer of at least bytes (nullptr when out of memory or past kMaxScratch buffers), lent
  // until the Direct dies.
  char* scratch(size_t bytes);

 private:
  Status track(Status posted, core::Request* r);
  proto::Comm& comm_;
  const int tag_;
  ReqList inFlight_;
  static constexpr size_t kMaxScratch = 2;  // what the forms here take at most
  ScratchCache::Buffer scratch_[kMaxScratch];
  size_t nScratch_ = 0;
  bool abandoned_ = false;  // a wait timed out with requests in flight
};

// The direct form of an algorithm: Ok, or an error (the caller finishes the Direct).
using DirectFn = Status (*)(Direct& d, const CollArgs& args);

}  // namespace rrt::coll
