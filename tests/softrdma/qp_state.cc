#include "tests/softrdma/qp_state.h"

#include <cerrno>

#include "tests/softrdma/cq.h"
#include "tests/softrdma/die.h"
#include "tests/softrdma/requester.h"

namespace rrt::tests::softrdma {
namespace {

struct Transition {
  int required;
  int optional;
};

// Masks for RC and UC (IB spec 1.3, table 91; the kernel's qp_state_table).
Transition transition(ibv_qp_type type, ibv_qp_state from, ibv_qp_state to, bool* allowed) {
  const bool rc = type == IBV_QPT_RC;
  *allowed = true;
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) return {0, 0};
  if (from == IBV_QPS_RESET && to == IBV_QPS_INIT)
    return {IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0};
  if (from == IBV_QPS_INIT && to == IBV_QPS_INIT)
    return {0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS};
  if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
    int required = IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
    if (rc) required |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    return {required, IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX};
  }
  if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
    int required = IBV_QP_SQ_PSN;
    if (rc)
      required |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
    int optional =
        IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PATH_MIG_STATE;
    if (rc) optional |= IBV_QP_MIN_RNR_TIMER;
    return {required, optional};
  }
  if (from == IBV_QPS_RTS && to == IBV_QPS_RTS) {
    int optional =
        IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE;
    if (rc) optional |= IBV_QP_MIN_RNR_TIMER;
    return {0, optional};
  }
  *allowed = false;
  return {0, 0};
}

constexpr int kAccessBits = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                            IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

}  // namespace

int validateModify(const Qp& qp, const ibv_qp_attr& attr, int mask) {
  ibv_qp_state from = qp.state();
  if ((mask & IBV_QP_CUR_STATE) && attr.cur_qp_state != from) return EINVAL;
  ibv_qp_state to = (mask & IBV_QP_STATE) ? attr.qp_state : from;
  if (to == IBV_QPS_SQD || to == IBV_QPS_SQE || from == IBV_QPS_SQD)
    unimplemented("ibv_modify_qp (SQD/SQE states)");
  if (to > IBV_QPS_ERR) return EINVAL;
  bool allowed;
  Transition t = transition(qp.ibv.qp_type, from, to, &allowed);
  if (!allowed) return EINVAL;
  int given = mask & ~IBV_QP_STATE;
  if ((given & t.required) != t.required) return EINVAL;
  if (given & ~(t.required | t.optional)) return EINVAL;
  if (given & IBV_QP_ALT_PATH) unimplemented("ibv_modify_qp (IBV_QP_ALT_PATH)");

  if ((mask & IBV_QP_PORT) && attr.port_num != kPortNum) return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) && attr.pkey_index >= kPkeyTableLen) return EINVAL;
  if ((mask & IBV_QP_ACCESS_FLAGS) && (attr.qp_access_flags & ~kAccessBits)) return EINVAL;
  if ((mask & IBV_QP_PATH_MTU) && (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > IBV_MTU_4096))
    return EINVAL;
  if (mask & IBV_QP_AV) {
    // RoCE-like port: the address must carry a GRH with a valid source GID index.
    const ibv_ah_attr& ah = attr.ah_attr;
    if (!ah.is_global || ah.grh.sgid_index >= kGidTableLen) return EINVAL;
    if (ah.port_num != 0 && ah.port_num != kPortNum) return EINVAL;
  }
  if ((mask & IBV_QP_DEST_QPN) && attr.dest_qp_num > 0xffffff) return EINVAL;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr.max_dest_rd_atomic > kMaxRdAtom) return EINVAL;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr.max_rd_atomic > kMaxRdAtom) return EINVAL;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && attr.min_rnr_timer > 31) return EINVAL;
  if ((mask & IBV_QP_TIMEOUT) && attr.timeout > 31) return EINVAL;
  if ((mask & IBV_QP_RETRY_CNT) && attr.retry_cnt > 7) return EINVAL;
  if ((mask & IBV_QP_RNR_RETRY) && attr.rnr_retry > 7) return EINVAL;
  return 0;
}

void applyModify(Engine& engine, Qp& qp, const ibv_qp_attr& attr, int mask) {
  ibv_qp_attr& a = qp.attr;
  if (mask & IBV_QP_PKEY_INDEX) a.pkey_index = attr.pkey_index;
  if (mask & IBV_QP_PORT) a.port_num = attr.port_num;
  if (mask & IBV_QP_ACCESS_FLAGS) a.qp_access_flags = attr.qp_access_flags;
  if (mask & IBV_QP_PATH_MTU) a.path_mtu = attr.path_mtu;
  if (mask & IBV_QP_AV) a.ah_attr = attr.ah_attr;
  if (mask & IBV_QP_DEST_QPN) a.dest_qp_num = attr.dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) a.rq_psn = attr.rq_psn & 0xffffff;
  if (mask & IBV_QP_SQ_PSN) a.sq_psn = attr.sq_psn & 0xffffff;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) a.max_dest_rd_atomic = attr.max_dest_rd_atomic;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) a.max_rd_atomic = attr.max_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) a.min_rnr_timer = attr.min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) a.timeout = attr.timeout;
  if (mask & IBV_QP_RETRY_CNT) a.retry_cnt = attr.retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) a.rnr_retry = attr.rnr_retry;
  if (mask & IBV_QP_PATH_MIG_STATE) a.path_mig_state = attr.path_mig_state;
  if (!(mask & IBV_QP_STATE)) return;

  ibv_qp_state from = a.qp_state, to = attr.qp_state;
  switch (to) {
    case IBV_QPS_RESET: {
      // Back to a fresh QP: queues emptied without completions, attributes forgotten.
      ibv_qp_attr fresh{};
      fresh.cap = a.cap;
      a = fresh;
      qp.sqHead_ = qp.sqNext_ = qp.sqTail_ = 0;
      qp.rq_.clear();
      qp.rnrWaiting_ = false;
      qp.rnrNakPending_ = false;
      break;
    }
    case IBV_QPS_RTR:
      if (from == IBV_QPS_INIT) qp.expectedPsn_ = a.rq_psn;
      break;
    case IBV_QPS_RTS:
      if (from == IBV_QPS_RTR) {
        qp.nextPsn_ = a.sq_psn;
        qp.rnrRetryLeft_ = a.rnr_retry;
        qp.retryLeft_ = a.retry_cnt;
      }
      break;
    case IBV_QPS_ERR:
      enterError(engine, qp);
      return;
    default:
      break;
  }
  a.qp_state = to;
  a.cur_qp_state = to;
  if (to == IBV_QPS_RTS) requesterPump(engine, qp);
}

void enterError(Engine& engine, Qp& qp) {
  bool wasError = qp.attr.qp_state == IBV_QPS_ERR;
  qp.attr.qp_state = IBV_QPS_ERR;
  qp.attr.cur_qp_state = IBV_QPS_ERR;
  qp.rnrWaiting_ = false;
  for (; qp.sqHead_ < qp.sqTail_; ++qp.sqHead_) {
    const SendWqe& w = qp.slot(qp.sqHead_);
    ibv_wc wc{};
    wc.wr_id = w.wrId;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.opcode = IBV_WC_SEND;
    wc.qp_num = qp.qpn();
    engine.complete(*qp.sendCq, wc, false);
  }
  qp.sqNext_ = qp.sqHead_;
  for (const RecvWqe& r : qp.rq_) {
    ibv_wc wc{};
    wc.wr_id = r.wrId;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.opcode = IBV_WC_RECV;
    wc.qp_num = qp.qpn();
    engine.complete(*qp.recvCq, wc, false);
  }
  qp.rq_.clear();
  if (qp.srq && !wasError) postAsyncEvent(*qp.ctx, IBV_EVENT_QP_LAST_WQE_REACHED, &qp.ibv);
}

}  // namespace rrt::tests::softrdma
