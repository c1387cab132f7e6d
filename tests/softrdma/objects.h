// Verbs objects of the software RDMA device. Each embeds the public ibv_* struct as its first
// member, so the pointer handed to the application converts back with a static cast.
// Contract: all mutable state below (queues, QP attributes, tables) is guarded by the process-wide
// Engine::lock_, except a CQ's ring, guarded by its own lock_ so that polling never waits for the
// engine. Lock order: Engine::lock_, then Cq::lock_.
#pragma once

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "tests/softrdma/device_caps.h"

namespace rrt::tests::softrdma {

struct Context {
  verbs_context verbs;  // verbs.context is what the application sees
  int asyncWriteFd = -1;
  static Context* from(ibv_context* c) {
    return reinterpret_cast<Context*>(reinterpret_cast<char*>(c) - offsetof(verbs_context, context));
  }
};
static_assert(offsetof(Context, verbs) == 0);

struct Pd {
  ibv_pd ibv;
  int users = 0;  // MRs, QPs, SRQs
};

struct Mr {
  ibv_mr ibv;
  int access = 0;
  uint64_t iova = 0;  // remote and local addresses are in this space
  Pd* pd = nullptr;
  char* local = nullptr;  // where the registered bytes are in this process
  // A dma-buf MR (ibv_reg_dmabuf_mr): the device's own mapping of the dma-buf, unmapped at
  // deregistration (the mapping holds the exporter's pages, as a NIC's attachment does).
  void* dmabufMap = nullptr;
  size_t dmabufMapLen = 0;
  // Pinning model (SOFTRDMA_PIN_CHECK=1): the page frames behind the MR at registration, as
  // hardware pins them. Empty when the check is off or the frames are unreadable.
  std::vector<uint64_t> frames;
  // True when a page of [local, local+len) is no longer the page registered (pin_check.cc).
  bool pagesChanged(const char* local, uint64_t len) const;
  // Local address of [iova, iova+len) or nullptr if out of bounds.
  char* translate(uint64_t address, uint64_t len) const {
    if (address < iova || len > ibv.length || address - iova > ibv.length - len) return nullptr;
    return local + (address - iova);
  }
};

struct CompChannel {
  ibv_comp_channel ibv;
  int writeFd = -1;
  int cqs = 0;
};

struct Cq {
  ibv_cq ibv;
  std::mutex lock_;
  std::vector<ibv_wc> ring_;
  size_t head_ = 0;
  size_t count_ = 0;
  bool armed_ = false;
  bool solicitedOnly_ = false;
  CompChannel* channel_ = nullptr;
  uint32_t eventsDelivered_ = 0;  // guarded by ibv.mutex, compared with comp_events_completed
  int users_ = 0;                 // QPs using it (engine lock)
};

struct RecvWqe {
  uint64_t wrId = 0;
  uint32_t numSge = 0;
  ibv_sge sge[kMaxSge];
};

struct Srq {
  ibv_srq ibv;
  Pd* pd = nullptr;
  std::deque<RecvWqe> queue_;
  uint32_t maxWr_ = 0;
  uint32_t maxSge_ = 0;
  uint32_t limit_ = 0;  // armed limit; 0: disarmed
  int users_ = 0;
};

struct SendWqe {
  uint64_t wrId = 0;
  ibv_wr_opcode opcode = IBV_WR_SEND;
  unsigned sendFlags = 0;
  uint32_t imm = 0;
  uint32_t numSge = 0;
  ibv_sge sge[kMaxSge];  // after an inline post: one entry naming the QP's inline arena
  bool inlined = false;
  uint32_t rkey = 0;
  uint64_t raddr = 0;
  uint64_t compareAdd = 0;
  uint64_t swap = 0;
  uint64_t length = 0;
  uint32_t psn = 0;
  bool signaled = false;
};

struct Qp {
  ibv_qp ibv;
  Context* ctx = nullptr;
  Pd* pd = nullptr;
  Cq* sendCq = nullptr;
  Cq* recvCq = nullptr;
  Srq* srq = nullptr;
  ibv_qp_cap cap{};
  bool sqSigAll = false;
  ibv_qp_attr attr{};  // current attributes; attr.qp_state is the authoritative state

  // requester: ring positions, head <= next <= tail
  std::vector<SendWqe> sq_;
  std::vector<char> inlineArena_;  // cap.max_inline_data bytes per SQ slot, never reallocated
  uint64_t sqHead_ = 0;            // oldest WQE not completed
  uint64_t sqNext_ = 0;            // next WQE to transmit
  uint64_t sqTail_ = 0;            // next free slot
  uint32_t nextPsn_ = 0;
  int rnrRetryLeft_ = 0;
  int retryLeft_ = 0;
  bool rnrWaiting_ = false;
  std::chrono::steady_clock::time_point rnrDeadline_{};

  // responder
  std::deque<RecvWqe> rq_;
  uint32_t expectedPsn_ = 0;
  bool rnrNakPending_ = false;  // after an RNR NAK, drop requests until expectedPsn_ returns

  SendWqe& slot(uint64_t pos) { return sq_[pos % sq_.size()]; }
  ibv_qp_state state() const { return attr.qp_state; }
  uint32_t qpn() const { return ibv.qp_num; }
};

}  // namespace rrt::tests::softrdma
