// The collective task: one running collective on one rank, an explicit resumable state machine.
//
// Each algorithm derives from Task and implements advance(): it keeps its position in member
// fields (an enum class Phase and step indices), posts the messages of the next step, and
// returns InProgress when it must wait; the engine calls advance() again when one of its
// requests completes. advance() returns Ok when the collective is done, or an error. A task
// never blocks and takes its scratch memory once (scratch()), not per message, from its
// communicator's scratch cache (scratch_cache.h): in steady state a collective allocates nothing.
//
// Two ways to wait, both driven by completion callbacks that only count:
//   - steps:  post a few messages, then `if (!idle()) return Status::InProgress;` at the top of
//             the loop: idle() is true once every posted request completed (and releases them).
//   - streams (pipelined ring / chain): keep request handles from send(..., &slot) and poll
//             them with done(slot), which releases the request once it is complete.
// Errors of completed requests (truncation, failed peer) land in error_; the engine lets the
// requests still in flight finish before it completes the user's request with the error.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/coll/coll.h"
#include "runtime/coll/scratch_cache.h"
#include "runtime/coll/vector_pool.h"

namespace rrt::coll {

// The request handles a task holds: the first kInline without touching the heap (a step posts
// a handful), the rest in a vector whose storage comes from and goes back to
// requestListPool() (vector_pool.h). Order is not kept (removal swaps with the last).
class ReqList {
 public:
  static constexpr size_t kInline = 8;
  ReqList() = default;
  ReqList(const ReqList&) = delete;
  ReqList& operator=(const ReqList&) = delete;
  ~ReqList() { requestListPool().give(more_); }
  size_t size() const { return n_; }
  core::Request*& operator[](size_t i) { return i < kInline ? inline_[i] : more_[i - kInline]; }
  void push(core::Request* r) {
    if (n_ < kInline) {
      inline_[n_] = r;
    } else {
      if (more_.capacity() == 0) more_ = requestListPool().take(kInline);
      more_.push_back(r);
    }
    ++n_;
  }
  // Removes the entry equal to r (swap with the last); false when absent.
  bool remove(core::Request* r) {
    for (size_t i = 0; i < n_; ++i) {
      if ((*this)[i] != r) continue;
      (*this)[i] = (*this)[n_ - 1];
      pop();
      return true;
    }
    return false;
  }
  void clear() {
    n_ = 0;
    more_.clear();
  }

 private:
  void pop() {
    --n_;
    if (n_ >= kInline) more_.pop_back();
  }
  core::Request* inline_[kInline];
  std::vector<core::Request*> more_;
  size_t n_ = 0;
};

class Task {
 public:
  Task(proto::Comm& comm, CollArgs&& args) : comm_(comm), args_(std::move(args)) {}
  virtual ~Task();
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  // Tasks of up to kPooledBytes come from a free list of blocks (engine.cc): starting a
  // collective does not go to malloc once a few have run. Larger ones use the heap.
  static constexpr size_t kPooledBytes = 1024;
  static void* operator new(size_t bytes);
  static void operator delete(void* p, size_t bytes);

  // Runs until it must wait. Ok = finished, InProgress = waiting, else an error.
  virtual Status advance() = 0;

  // ---- engine bookkeeping (engine.cc) ----
  int tag_ = 0;
  core::Request* userReq_ = nullptr;
  bool ready_ = false;       // a request completed since the last advance()
  Status failure_ = Status::Ok;  // advance() failed: drain, then complete with this
  int pending() const { return pending_; }
  // Posts run by a parent task (composites) use the parent's tag and callback target.
  Task* notify_ = this;

 protected:
  // Posts a message of this collective (tag_ on comm.collCtx()). With slot, the request is
  // handed back for done(); without, idle() waits for it. Zero-byte messages are real messages.
  Status send(int peer, const void* buf, size_t bytes, core::Request** slot = nullptr);
  Status recv(int peer, void* buf, size_t bytes, core::Request** slot = nullptr);
  // True when no request of this task is in flight; releases every completed one.
  bool idle();
  // True (and the request released, slot cleared) when *slot completed; true for nullptr.
  bool done(core::Request*& slot);
  // Scratch memory for this operation, lent by the communicator's cache until the task ends
  // (nullptr when out of memory, or beyond kMaxScratch buffers); device memory when the
  // collective runs on the device (onDevice()).
  static constexpr size_t kMaxScratch = 4;
  char* scratch(size_t bytes);
  // inout = in op inout over count elements of the collective's type; on the device (the
  // driver's reduction kernels on rrt's stream) when the collective runs there. A device
  // failure lands in error_.
  void reduce(const void* in, void* inout, size_t count) const {
    if (__builtin_expect(onDevice(), 0)) {
      deviceReduce(in, inout, count);
      return;
    }
    args_.reducer.apply(in, inout, count);
  }
  // A collective on device buffers that runs on the device (device_stage.h: runsOnDevice):
  // its buffers and scratch are device memory, reductions and local copies run there, and its
  // messages are device-buffer point-to-point (CUDA IPC within a node).
  bool onDevice() const { return args_.memType == memory::MemType::Cuda; }
  int rank() const { return comm_.rank; }
  int size() const { return comm_.size; }
  static char* bytePtr(void* p) { return static_cast<char*>(p); }
  static const char* bytePtr(const void* p) { return static_cast<const char*>(p); }
  void copy(void* dst, const void* src, size_t n) const {
    if (!n || dst == src) return;
    if (__builtin_expect(onDevice(), 0)) {
      deviceCopy(dst, src, n);
      return;
    }
    std::memcpy(dst, src, n);
  }

  proto::Comm& comm_;
  CollArgs args_;
  mutable Status error_ = Status::Ok;

 private:
  friend void onRequestComplete(core::Request* r, void* arg);
  Status post(Status s, core::Request* r, core::Request** slot);
  int pending_ = 0;
  ReqList live_;   // posted, not yet released (without slot)
  ReqList slots_;  // posted with a slot, not yet released
  ScratchCache::Buffer scratch_[kMaxScratch];
  size_t nScratch_ = 0;
  std::vector<void*> deviceScratch_;
  void deviceReduce(const void* in, void* inout, size_t count) const;
  void deviceCopy(void* dst, const void* src, size_t n) const;
};

using TaskFactory = Task* (*)(proto::Comm& comm, CollArgs&& args);

// The scratch cache of comm, made with its collective state on first use (engine.cc).
ScratchCache& commScratch(proto::Comm& comm);

// Starts t on comm with messages tagged tag (collectives: collTag of the communicator's
// sequence; other users a tag of their own) and hands back the user's request, completed when
// t finishes. gpuStage: host mirrors of device buffers (device_stage.h), or nullptr.
void launch(proto::Comm& comm, Task* t, int tag, core::Request** out, void* gpuStage = nullptr);

}  // namespace rrt::coll
