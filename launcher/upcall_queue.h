// UpcallQueue: hands PMIx server upcalls from PMIx's progress thread to the launcher's loop.
//
// PMIx calls the host module on its own thread; doing real work there (fork, signalling, waiting)
// risks deadlocks inside the library. The callbacks only push an Upcall here; push() writes to an
// eventfd that the main loop polls, and the main loop drains the queue with popAll(). Thread-safe;
// the fd stays readable until popAll() is called. Upcalls that carry PMIx callbacks (fence,
// direct modex) must be answered exactly once by whoever pops them (see PmixServer::answer*).
#pragma once

#include <pmix_server.h>

#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace rrt::launcher {

struct Upcall {
  enum class Kind { Connected, Finalized, Abort, Fence, DirectModex };
  Kind kind = Kind::Connected;
  pmix_rank_t rank = 0;  // the calling (or, for DirectModex, the requested) rank
  // Abort
  int status = 0;
  std::string message;
  // Fence: the node's aggregated blob, owned by the host (PMIx 4.2.2 never frees it)
  char* data = nullptr;
  size_t ndata = 0;
  // Fence and DirectModex answers
  pmix_modex_cbfunc_t modexCallback = nullptr;
  void* modexCallbackData = nullptr;
  // Abort: releases the aborting client once the launcher has acted
  pmix_op_cbfunc_t opCallback = nullptr;
  void* opCallbackData = nullptr;
};

class UpcallQueue {
 public:
  UpcallQueue();
  ~UpcallQueue();
  UpcallQueue(const UpcallQueue&) = delete;
  UpcallQueue& operator=(const UpcallQueue&) = delete;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }  // readable while upcalls are queued
  void push(Upcall upcall);
  std::vector<Upcall> popAll();

 private:
  int fd_ = -1;
  std::mutex mutex_;
  std::deque<Upcall> queue_;
};

}  // namespace rrt::launcher
