// The per-process half of the software RDMA device: the "NIC" of one process.
// Contract: one Engine per process, started by the first ibv_open_device and stopped by the last
// ibv_close_device. It owns the process's Unix datagram socket (abstract name
// "softrdma-<uid>-<pid>"), the tables of live QPs and MRs, the outgoing packet queues and a
// progress thread that executes incoming requests and acknowledgements, so that applications only
// post and poll, as on hardware. The thread spins briefly (SOFTRDMA_SPIN_US, default 20 us,
// yielding) after traffic, then sleeps in ppoll: oversubscribed runs do not burn CPU.
// An application thread polling an empty CQ also drives the engine (pollFromApplication), so
// that a busy-polling program does not wait for the scheduler to run the progress thread; while
// the application polls, the progress thread stands aside (checks every kStandAside) instead of
// waking for each datagram: on 2 cores its wake-ups would preempt the lock holder.
// Threading: lock_ guards every object's mutable state (see objects.h); all member functions
// below except acquire/release/get expect lock_ held.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tests/softrdma/objects.h"
#include "tests/softrdma/wire.h"

namespace rrt::tests::softrdma {

class Engine {
 public:
  static Engine& acquire();  // first caller starts the engine
  static void release();     // last caller stops it
  static Engine& get();      // only between acquire and release
  // From ibv_poll_cq on an empty CQ: handles pending packets unless another thread is at it.
  static void pollFromApplication();

  std::mutex lock_;
  std::unordered_map<uint32_t, Qp*> qps_;
  std::unordered_map<uint32_t, Mr*> mrs_;

  pid_t self() const { return self_; }
  // Queues one packet for the engine of `pid`; sent by flush().
  void send(pid_t pid, const PacketHeader& header, const WireSge* sges);
  // Sends what is queued; a full peer socket keeps the rest for the progress thread.
  void flush();
  // Makes the progress thread recompute its deadlines (a timer armed by another thread).
  void wake();
  // Queues a completion; flush() makes it visible once the packets queued before it (the ACK
  // of a receive, the NAK of an error) have left, as a NIC acknowledges before it completes:
  // an application may exit as soon as it sees the completion.
  void complete(Cq& cq, const ibv_wc& wc, bool solicited) { deferred_.push_back({&cq, wc, solicited}); }
  // Drops queued completions of a CQ being destroyed.
  void forgetCq(Cq* cq) {
    for (size_t i = 0; i < deferred_.size();)
      if (deferred_[i].cq == cq) deferred_.erase(deferred_.begin() + static_cast<long>(i));
      else ++i;
  }
  Mr* findMr(uint32_t key) const {
    auto it = mrs_.find(key);
    return it == mrs_.end() ? nullptr : it->second;
  }
  Qp* findQp(uint32_t qpn) const {
    auto it = qps_.find(qpn);
    return it == qps_.end() ? nullptr : it->second;
  }

 private:
  Engine();
  ~Engine();
  void progressLoop();
  bool drain();  // lock held: handles what the socket holds; true if anything
  void dispatch(const char* data, size_t length);
  void peerGone(const std::vector<char>& packets);

  pid_t self_;
  int socket_ = -1;
  int wakeFd_ = -1;
  bool stop_ = false;
  int users_ = 0;
  std::chrono::microseconds spin_;
  std::map<pid_t, std::vector<char>> outbox_;
  std::vector<char> buffer_;  // one datagram being dispatched
  struct Deferred {
    Cq* cq;
    ibv_wc wc;
    bool solicited;
  };
  std::vector<Deferred> deferred_;
  std::atomic<int64_t> lastApplicationPoll_{0};  // steady_clock nanoseconds
  std::thread thread_;
};

// Writes an asynchronous event to the context's async fd (ibv_get_async_event reads it).
void postAsyncEvent(Context& ctx, ibv_event_type type, void* element);

}  // namespace rrt::tests::softrdma
