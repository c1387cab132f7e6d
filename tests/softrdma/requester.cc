#include "tests/softrdma/requester.h"

#include "tests/softrdma/fault.h"

#include <cerrno>
#include <cstring>

#include "tests/softrdma/cq.h"
#include "tests/softrdma/die.h"
#include "tests/softrdma/fault.h"
#include "tests/softrdma/qp_state.h"
#include "tests/softrdma/registry.h"

namespace rrt::tests::softrdma {
namespace {

using Clock = std::chrono::steady_clock;

bool isAtomic(ibv_wr_opcode op) {
  return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}
bool writesLocal(ibv_wr_opcode op) { return op == IBV_WR_RDMA_READ || isAtomic(op); }

ibv_wc_opcode wcOpcode(ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
      return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return IBV_WC_FETCH_ADD;
    default:
      return IBV_WC_SEND;
  }
}

PacketOp packetOp(ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return PacketOp::kWrite;
    case IBV_WR_RDMA_READ:
      return PacketOp::kRead;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return PacketOp::kCompSwap;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return PacketOp::kFetchAdd;
    default:
      return PacketOp::kSend;
  }
}

// IB spec encoding of the RNR NAK timer, in microseconds (0 is the longest).
Clock::duration rnrDelay(uint32_t code) {
  static const uint32_t kMicros[32] = {655360, 10,    20,    30,    40,    60,    80,    120,
                                       160,    240,   320,   480,   640,   960,   1280,  1920,
                                       2560,   3840,  5120,  7680,  10240, 15360, 20480, 30720,
                                       40960,  61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return std::chrono::microseconds(kMicros[code & 31]);
}

void completeSend(Engine& engine, Qp& qp, const SendWqe& w, ibv_wc_status status) {
  if (status == IBV_WC_SUCCESS && !w.signaled) return;
  ibv_wc wc{};
  wc.wr_id = w.wrId;
  wc.status = status;
  wc.opcode = wcOpcode(w.opcode);
  wc.qp_num = qp.qpn();
  if (status == IBV_WC_SUCCESS && writesLocal(w.opcode)) wc.byte_len = static_cast<uint32_t>(w.length);
  engine.complete(*qp.sendCq, wc, false);
}

// IB local ACK timeout: 4.096 us * 2^timeout (0: infinite, retried at the 2^14 pace forever).
Clock::duration ackTimeout(uint8_t code) {
  return std::chrono::nanoseconds(4096LL << (code == 0 ? 14 : code));
}

void failHead(Engine& engine, Qp& qp, ibv_wc_status status);

// No answer will come (destination QP missing or not ready, peer process gone): as a NIC whose
// ACK timer expires, wait one timeout, then retransmit from the oldest WQE; after retry_cnt
// retransmissions complete with IBV_WC_RETRY_EXC_ERR.
void transportTimeout(Engine& engine, Qp& qp) {
  if (qp.rnrWaiting_) return;  // one timeout per round; later NAKs of the round are echoes
  if (qp.attr.timeout != 0) {
    if (qp.retryLeft_ == 0) return failHead(engine, qp, IBV_WC_RETRY_EXC_ERR);
    --qp.retryLeft_;
  }
  qp.sqNext_ = qp.sqHead_;
  qp.rnrWaiting_ = true;
  qp.rnrDeadline_ = Clock::now() + ackTimeout(qp.attr.timeout);
  engine.wake();
}

// Completes the oldest WQE with an error; the QP then enters ERR and flushes the rest.
void failHead(Engine& engine, Qp& qp, ibv_wc_status status) {
  completeSend(engine, qp, qp.slot(qp.sqHead_), status);
  ++qp.sqHead_;
  enterError(engine, qp);
}

// Local address of each SGE, checked against this process's MRs as the NIC would.
bool translateLocal(Engine& engine, Qp& qp, const SendWqe& w, WireSge* out, uint8_t* count) {
  *count = 0;
  for (uint32_t i = 0; i < w.numSge; ++i) {
    const ibv_sge& s = w.sge[i];
    if (s.length == 0) continue;
    if (w.inlined) {
      out[(*count)++] = {s.addr, s.length};
      continue;
    }
    Mr* mr = engine.findMr(s.lkey);
    if (!mr || mr->pd != qp.pd) return false;
    if (writesLocal(w.opcode) && !(mr->access & IBV_ACCESS_LOCAL_WRITE)) return false;
    char* local = mr->translate(s.addr, s.length);
    if (!local || mr->pagesChanged(local, s.length)) return false;
    out[(*count)++] = {reinterpret_cast<uintptr_t>(local), s.length};
  }
  return true;
}

}  // namespace

int requesterPostSend(Engine& engine, Qp& qp, ibv_send_wr* wr, ibv_send_wr** badWr) {
  const bool uc = qp.ibv.qp_type == IBV_QPT_UC;
  for (; wr; wr = wr->next) {
    *badWr = wr;
    // rxe refuses posts before RTS too (EINVAL); in ERR they are accepted and flushed.
    if (qp.state() != IBV_QPS_RTS && qp.state() != IBV_QPS_ERR) return EINVAL;
    switch (wr->opcode) {
      case IBV_WR_SEND:
      case IBV_WR_SEND_WITH_IMM:
      case IBV_WR_RDMA_WRITE:
      case IBV_WR_RDMA_WRITE_WITH_IMM:
        break;
      case IBV_WR_RDMA_READ:
      case IBV_WR_ATOMIC_CMP_AND_SWP:
      case IBV_WR_ATOMIC_FETCH_AND_ADD:
        if (uc) return EINVAL;
        break;
      default:
        unimplemented("ibv_post_send (this opcode)");
    }
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > qp.cap.max_send_sge) return EINVAL;
    if (wr->send_flags & ~(IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE | IBV_SEND_FENCE))
      unimplemented("ibv_post_send (send flag)");
    uint64_t length = 0;
    for (int i = 0; i < wr->num_sge; ++i) length += wr->sg_list[i].length;
    if (length > kMaxMsgSize) return EINVAL;
    bool inlined = (wr->send_flags & IBV_SEND_INLINE) != 0;
    if (inlined && (writesLocal(wr->opcode) || length > qp.cap.max_inline_data)) return EINVAL;
    if (isAtomic(wr->opcode) && (wr->num_sge != 1 || length != 8)) return EINVAL;
    if (qp.sqTail_ - qp.sqHead_ >= qp.sq_.size()) return ENOMEM;

    uint64_t pos = qp.sqTail_;
    SendWqe& w = qp.slot(pos);
    w = SendWqe{};
    w.wrId = wr->wr_id;
    w.opcode = wr->opcode;
    w.sendFlags = wr->send_flags;
    w.imm = wr->imm_data;
    w.length = length;
    w.signaled = qp.sqSigAll || (wr->send_flags & IBV_SEND_SIGNALED);
    if (wr->opcode == IBV_WR_RDMA_READ || wr->opcode == IBV_WR_RDMA_WRITE ||
        wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
      w.rkey = faultRkey(wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WR_RDMA_WRITE : wr->opcode,
                         wr->wr.rdma.rkey);
      w.raddr = wr->wr.rdma.remote_addr;
    } else if (isAtomic(wr->opcode)) {
      w.rkey = wr->wr.atomic.rkey;
      w.raddr = wr->wr.atomic.remote_addr;
      w.compareAdd = wr->wr.atomic.compare_add;
      w.swap = wr->wr.atomic.swap;
    }
    if (inlined) {
      // Copied now: the application may reuse its buffer as soon as the post returns.
      char* arena = qp.inlineArena_.data() + (pos % qp.sq_.size()) * qp.cap.max_inline_data;
      size_t at = 0;
      for (int i = 0; i < wr->num_sge; ++i) {
        std::memcpy(arena + at, reinterpret_cast<void*>(wr->sg_list[i].addr), wr->sg_list[i].length);
        at += wr->sg_list[i].length;
      }
      w.inlined = true;
      w.numSge = 1;
      w.sge[0] = {reinterpret_cast<uintptr_t>(arena), static_cast<uint32_t>(length), 0};
    } else {
      w.numSge = static_cast<uint32_t>(wr->num_sge);
      for (int i = 0; i < wr->num_sge; ++i) w.sge[i] = wr->sg_list[i];
    }
    w.psn = qp.nextPsn_;
    qp.nextPsn_ = (qp.nextPsn_ + 1) & 0xffffff;
    ++qp.sqTail_;
  }
  *badWr = nullptr;
  if (qp.state() == IBV_QPS_ERR)
    enterError(engine, qp);  // flushes what was just posted
  else
    requesterPump(engine, qp);
  return 0;
}

void requesterPump(Engine& engine, Qp& qp) {
  if (qp.state() != IBV_QPS_RTS || qp.rnrWaiting_) return;
  pid_t pid = 0;
  while (qp.sqNext_ < qp.sqTail_ && qp.sqNext_ - qp.sqHead_ < kSendWindow) {
    const SendWqe& w = qp.slot(qp.sqNext_);
    PacketHeader h{};
    WireSge sges[kMaxSge];
    bool valid = translateLocal(engine, qp, w, sges, &h.numSge);
    if (!pid) pid = Registry::instance().lookupQpn(qp.attr.dest_qp_num);
    if (!valid || !pid) {
      // Fail in order: only once everything before it has completed.
      if (qp.sqNext_ != qp.sqHead_) return;
      if (!valid) return failHead(engine, qp, IBV_WC_LOC_PROT_ERR);
      return transportTimeout(engine, qp);
    }
    h.size = static_cast<uint32_t>(sizeof h + h.numSge * sizeof(WireSge));
    h.dstQpn = qp.attr.dest_qp_num;
    h.srcQpn = qp.qpn();
    h.psn = w.psn;
    h.op = packetOp(w.opcode);
    if (w.opcode == IBV_WR_SEND_WITH_IMM || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM) {
      h.flags |= kFlagImm;
      h.imm = w.imm;
    }
    if (w.sendFlags & IBV_SEND_SOLICITED) h.flags |= kFlagSolicited;
    h.rkey = w.rkey;
    h.raddr = w.raddr;
    h.length = w.length;
    h.compareAdd = w.compareAdd;
    h.swap = w.swap;
    h.srcPid = engine.self();
    engine.send(pid, h, sges);
    ++qp.sqNext_;
  }
}

void requesterHandleAck(Engine& engine, const PacketHeader& ack) {
  Qp* found = engine.findQp(ack.dstQpn);
  if (!found) return;  // QP destroyed meanwhile
  Qp& qp = *found;
  if (qp.state() != IBV_QPS_RTS || qp.sqHead_ == qp.sqNext_ || qp.rnrWaiting_) return;  // stale
  if (ack.srcQpn != qp.attr.dest_qp_num) return;
  const SendWqe& head = qp.slot(qp.sqHead_);
  switch (ack.syndrome) {
    case Syndrome::kAck:
      if (ack.psn != head.psn) return;
      completeSend(engine, qp, head, IBV_WC_SUCCESS);
      ++qp.sqHead_;
      qp.rnrRetryLeft_ = qp.attr.rnr_retry;
      qp.retryLeft_ = qp.attr.retry_cnt;
      requesterPump(engine, qp);
      return;
    case Syndrome::kRnrNak:
      if (ack.psn != head.psn) return;
      if (qp.attr.rnr_retry != 7) {
        if (qp.rnrRetryLeft_ == 0) return failHead(engine, qp, IBV_WC_RNR_RETRY_EXC_ERR);
        --qp.rnrRetryLeft_;
      }
      qp.sqNext_ = qp.sqHead_;  // go back: the responder drops what follows
      qp.rnrWaiting_ = true;
      qp.rnrDeadline_ = Clock::now() + rnrDelay(ack.rnrTimer);
      engine.wake();
      return;
    case Syndrome::kSeqNak:
      for (uint64_t pos = qp.sqHead_; pos < qp.sqNext_; ++pos) {
        if (qp.slot(pos).psn == ack.psn) {
          qp.sqNext_ = pos;
          requesterPump(engine, qp);
          return;
        }
      }
      // The responder expects a PSN this requester never sent: a misconfigured connection that
      // real hardware would retry until retry_cnt runs out.
      return failHead(engine, qp, IBV_WC_RETRY_EXC_ERR);
    case Syndrome::kRemAccessNak:
      if (ack.psn == head.psn) failHead(engine, qp, IBV_WC_REM_ACCESS_ERR);
      return;
    case Syndrome::kRemInvReqNak:
      if (ack.psn == head.psn) failHead(engine, qp, IBV_WC_REM_INV_REQ_ERR);
      return;
    case Syndrome::kRemOpNak:
      if (ack.psn == head.psn) failHead(engine, qp, IBV_WC_REM_OP_ERR);
      return;
    case Syndrome::kNoQp:
      if (ack.psn == head.psn) transportTimeout(engine, qp);
      return;
  }
  die("requesterHandleAck", "unknown syndrome %d", static_cast<int>(ack.syndrome));
}

Clock::time_point requesterRunTimers(Engine& engine, Clock::time_point now) {
  Clock::time_point next = Clock::time_point::max();
  for (auto& entry : engine.qps_) {
    Qp& qp = *entry.second;
    if (!qp.rnrWaiting_) continue;
    if (qp.rnrDeadline_ <= now) {
      qp.rnrWaiting_ = false;
      requesterPump(engine, qp);
    } else if (qp.rnrDeadline_ < next) {
      next = qp.rnrDeadline_;
    }
  }
  return next;
}

void requesterPeerUnreachable(Engine& engine, uint32_t qpn, uint32_t psn) {
  Qp* qp = engine.findQp(qpn);
  if (!qp || qp->state() != IBV_QPS_RTS || qp->sqHead_ == qp->sqNext_) return;
  transportTimeout(engine, *qp);
}

}  // namespace rrt::tests::softrdma
