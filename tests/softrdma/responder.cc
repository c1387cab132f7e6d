#include "tests/softrdma/responder.h"

#include <signal.h>

#include <atomic>
#include <cerrno>
#include <vector>

#include "tests/softrdma/cma.h"
#include "tests/softrdma/cq.h"
#include "tests/softrdma/die.h"
#include "tests/softrdma/qp_state.h"

namespace rrt::tests::softrdma {
namespace {

std::atomic<unsigned long long> gRnrNaksSent{0};

bool fillRecvWqe(const ibv_recv_wr* wr, uint32_t maxSge, RecvWqe* out) {
  if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > maxSge) return false;
  out->wrId = wr->wr_id;
  out->numSge = static_cast<uint32_t>(wr->num_sge);
  for (int i = 0; i < wr->num_sge; ++i) out->sge[i] = wr->sg_list[i];
  return true;
}

void reply(Engine& engine, const PacketHeader& request, Syndrome syndrome, uint32_t psn,
           uint32_t rnrTimer = 0) {
  PacketHeader ack{};
  ack.size = sizeof ack;
  ack.dstQpn = request.srcQpn;
  ack.srcQpn = request.dstQpn;
  ack.psn = psn;
  ack.op = PacketOp::kAck;
  ack.syndrome = syndrome;
  ack.rnrTimer = rnrTimer;
  ack.srcPid = engine.self();
  engine.send(request.srcPid, ack, nullptr);
}

std::vector<iovec> remoteIovs(const PacketHeader& h, const WireSge* sges) {
  std::vector<iovec> v(h.numSge);
  for (uint32_t i = 0; i < h.numSge; ++i)
    v[i] = {reinterpret_cast<void*>(sges[i].addr), static_cast<size_t>(sges[i].length)};
  return v;
}

// The MR an incoming RDMA request names, or nullptr (remote access error).
char* checkRkey(Engine& engine, const Qp& qp, const PacketHeader& h, int access, uint64_t length) {
  if (!(qp.attr.qp_access_flags & access)) return nullptr;
  Mr* mr = engine.findMr(h.rkey);
  if (!mr || mr->pd != qp.pd || !(mr->access & access)) return nullptr;
  char* local = mr->translate(h.raddr, length);
  if (local && mr->pagesChanged(local, length)) return nullptr;
  return local;
}

void completeRecv(Engine& engine, Qp& qp, const RecvWqe& r, const PacketHeader& h, ibv_wc_status status,
                  ibv_wc_opcode opcode) {
  ibv_wc wc{};
  wc.wr_id = r.wrId;
  wc.status = status;
  wc.opcode = opcode;
  wc.qp_num = qp.qpn();
  wc.src_qp = h.srcQpn;
  if (status == IBV_WC_SUCCESS) {
    wc.byte_len = static_cast<uint32_t>(h.length);
    if (h.flags & kFlagImm) {
      wc.wc_flags |= IBV_WC_WITH_IMM;
      wc.imm_data = h.imm;
    }
    wc.wc_flags |= IBV_WC_GRH;  // RoCE: every packet carries a GRH
  }
  engine.complete(*qp.recvCq, wc, (h.flags & kFlagSolicited) != 0);
}

// Takes the next receive WQE (SRQ or own queue); false if none is posted.
bool takeRecv(Qp& qp, RecvWqe* out) {
  if (qp.srq) {
    Srq& srq = *qp.srq;
    if (srq.queue_.empty()) return false;
    *out = srq.queue_.front();
    srq.queue_.pop_front();
    if (srq.limit_ != 0 && srq.queue_.size() < srq.limit_) {
      srq.limit_ = 0;  // one event per arming, as ibv_modify_srq(IBV_SRQ_LIMIT) documents
      postAsyncEvent(*qp.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, &srq.ibv);
    }
    return true;
  }
  if (qp.rq_.empty()) return false;
  *out = qp.rq_.front();
  qp.rq_.pop_front();
  return true;
}

// A requester that exited: its request is as lost as the packets a dead NIC never sent.
// Called right after a failed CMA copy: ESRCH there means the address space is already gone.
bool requesterGone(pid_t pid) { return errno == ESRCH || (kill(pid, 0) != 0 && errno == ESRCH); }

// Executes one in-sequence request; returns the syndrome to answer with (kNoQp: drop it).
Syndrome execute(Engine& engine, Qp& qp, const PacketHeader& h, const WireSge* sges) {
  const bool needsRecv = h.op == PacketOp::kSend || (h.op == PacketOp::kWrite && (h.flags & kFlagImm));
  std::vector<iovec> remote = remoteIovs(h, sges);
  switch (h.op) {
    case PacketOp::kSend: {
      RecvWqe r;
      if (!takeRecv(qp, &r)) return Syndrome::kRnrNak;
      Pd* pd = qp.srq ? qp.srq->pd : qp.pd;
      std::vector<iovec> local;
      uint64_t capacity = 0, left = h.length;
      for (uint32_t i = 0; i < r.numSge; ++i) {
        const ibv_sge& s = r.sge[i];
        capacity += s.length;
        if (s.length == 0 || left == 0) continue;
        Mr* mr = engine.findMr(s.lkey);
        char* p = mr ? mr->translate(s.addr, s.length) : nullptr;
        if (!p || mr->pd != pd || !(mr->access & IBV_ACCESS_LOCAL_WRITE)) {
          completeRecv(engine, qp, r, h, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV);
          return Syndrome::kRemOpNak;
        }
        size_t n = left < s.length ? left : s.length;
        local.push_back({p, n});
        left -= n;
      }
      if (h.length > capacity) {
        completeRecv(engine, qp, r, h, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV);
        return Syndrome::kRemInvReqNak;
      }
      if (!cmaRead(h.srcPid, local.data(), local.size(), remote.data(), remote.size())) {
        if (requesterGone(h.srcPid)) {
          (qp.srq ? qp.srq->queue_ : qp.rq_).push_front(r);
          return Syndrome::kNoQp;
        }
        completeRecv(engine, qp, r, h, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RECV);
        return Syndrome::kRemOpNak;
      }
      completeRecv(engine, qp, r, h, IBV_WC_SUCCESS, IBV_WC_RECV);
      return Syndrome::kAck;
    }
    case PacketOp::kWrite: {
      if (needsRecv && (qp.srq ? qp.srq->queue_.empty() : qp.rq_.empty())) return Syndrome::kRnrNak;
      char* target = nullptr;
      if (h.length > 0) {  // a zero-length write checks no rkey (IB spec 9.4.4)
        target = checkRkey(engine, qp, h, IBV_ACCESS_REMOTE_WRITE, h.length);
        if (!target) return Syndrome::kRemAccessNak;
        iovec local{target, static_cast<size_t>(h.length)};
        if (!cmaRead(h.srcPid, &local, 1, remote.data(), remote.size()))
          return requesterGone(h.srcPid) ? Syndrome::kNoQp : Syndrome::kRemOpNak;
      }
      if (needsRecv) {
        RecvWqe r;
        takeRecv(qp, &r);
        completeRecv(engine, qp, r, h, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM);
      }
      return Syndrome::kAck;
    }
    case PacketOp::kRead: {
      if (h.length == 0) return Syndrome::kAck;
      char* source = checkRkey(engine, qp, h, IBV_ACCESS_REMOTE_READ, h.length);
      if (!source) return Syndrome::kRemAccessNak;
      iovec local{source, static_cast<size_t>(h.length)};
      if (!cmaWrite(h.srcPid, &local, 1, remote.data(), remote.size()))
        return requesterGone(h.srcPid) ? Syndrome::kNoQp : Syndrome::kRemOpNak;
      return Syndrome::kAck;
    }
    case PacketOp::kCompSwap:
    case PacketOp::kFetchAdd: {
      char* target = checkRkey(engine, qp, h, IBV_ACCESS_REMOTE_ATOMIC, 8);
      if (!target) return Syndrome::kRemAccessNak;
      if (h.raddr % 8 != 0) return Syndrome::kRemInvReqNak;
      // One progress thread executes every atomic aimed at this process: atomic with respect
      // to each other and (real atomic instructions) to the CPU (IBV_ATOMIC_HCA).
      auto* word = reinterpret_cast<uint64_t*>(target);
      uint64_t original;
      if (h.op == PacketOp::kCompSwap) {
        original = h.compareAdd;
        __atomic_compare_exchange_n(word, &original, h.swap, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
      } else {
        original = __atomic_fetch_add(word, h.compareAdd, __ATOMIC_SEQ_CST);
      }
      iovec local{&original, 8};
      if (!cmaWrite(h.srcPid, &local, 1, remote.data(), remote.size())) return Syndrome::kRemOpNak;
      return Syndrome::kAck;
    }
    case PacketOp::kAck:
      break;
  }
  die("responderHandleRequest", "unexpected packet op %d", static_cast<int>(h.op));
}

}  // namespace

int responderPostRecv(Engine& engine, Qp& qp, ibv_recv_wr* wr, ibv_recv_wr** badWr) {
  for (; wr; wr = wr->next) {
    *badWr = wr;
    if (qp.srq || qp.state() == IBV_QPS_RESET) return EINVAL;
    if (qp.rq_.size() >= qp.cap.max_recv_wr) return ENOMEM;
    RecvWqe r;
    if (!fillRecvWqe(wr, qp.cap.max_recv_sge, &r)) return EINVAL;
    qp.rq_.push_back(r);
  }
  *badWr = nullptr;
  if (qp.state() == IBV_QPS_ERR) enterError(engine, qp);  // flushes them
  return 0;
}

int responderPostSrqRecv(Srq& srq, ibv_recv_wr* wr, ibv_recv_wr** badWr) {
  for (; wr; wr = wr->next) {
    *badWr = wr;
    if (srq.queue_.size() >= srq.maxWr_) return ENOMEM;
    RecvWqe r;
    if (!fillRecvWqe(wr, srq.maxSge_, &r)) return EINVAL;
    srq.queue_.push_back(r);
  }
  *badWr = nullptr;
  return 0;
}

void responderHandleRequest(Engine& engine, const PacketHeader& h, const WireSge* sges) {
  Qp* found = engine.findQp(h.dstQpn);
  if (!found || (found->state() != IBV_QPS_RTR && found->state() != IBV_QPS_RTS) ||
      h.srcQpn != found->attr.dest_qp_num) {
    // Hardware drops it silently and the requester times out; answer at once instead.
    reply(engine, h, Syndrome::kNoQp, h.psn);
    return;
  }
  Qp& qp = *found;
  const bool uc = qp.ibv.qp_type == IBV_QPT_UC;
  if (h.psn != qp.expectedPsn_) {
    if (!qp.rnrNakPending_) {
      reply(engine, h, Syndrome::kSeqNak, qp.expectedPsn_);
      qp.rnrNakPending_ = true;  // one NAK until the expected PSN comes back
    }
    return;
  }
  qp.rnrNakPending_ = false;
  Syndrome result = execute(engine, qp, h, sges);
  if (result == Syndrome::kNoQp) return;  // the requester is gone: nothing to answer
  if (result == Syndrome::kRnrNak && !uc) {
    reply(engine, h, result, h.psn, qp.attr.min_rnr_timer);
    gRnrNaksSent.fetch_add(1, std::memory_order_relaxed);
    qp.rnrNakPending_ = true;
    return;
  }
  qp.expectedPsn_ = (qp.expectedPsn_ + 1) & 0xffffff;
  if (uc) {
    reply(engine, h, Syndrome::kAck, h.psn);  // UC requesters complete regardless
    return;
  }
  reply(engine, h, result, h.psn);
  if (result != Syndrome::kAck) enterError(engine, qp);
}

}  // namespace rrt::tests::softrdma

extern "C" unsigned long long softrdma_rnr_naks_sent(void) {
  return rrt::tests::softrdma::gRnrNaksSent.load(std::memory_order_relaxed);
}
