#include "runtime/transport/verbs/qp.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/core/log.h"

namespace rrt::transport::verbs {

Status createRcQp(const Device& dev, ibv_cq* cq, ibv_srq* srq, const QpSettings& s,
                  ibv_qp** out, uint32_t* maxInline) {
  ibv_qp_init_attr init{};
  init.send_cq = cq;
  init.recv_cq = cq;
  init.srq = srq;
  init.qp_type = IBV_QPT_RC;
  init.sq_sig_all = 0;
  init.cap.max_send_wr = s.sendDepth;
  init.cap.max_send_sge = 3;
  init.cap.max_recv_wr = 0;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = s.maxInline;
  ibv_qp* qp = ibv_create_qp(dev.pd, &init);
  if (!qp && s.maxInline) {  // some devices refuse large inline sizes: ask for none
    init.cap.max_inline_data = 0;
    qp = ibv_create_qp(dev.pd, &init);
  }
  if (!qp) {
    RRT_WARN("verbs: ibv_create_qp: %s", strerror(errno));
    return Status::ErrTransport;
  }
  *maxInline = init.cap.max_inline_data;

  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = dev.port;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
  if (int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                         IBV_QP_ACCESS_FLAGS)) {
    RRT_WARN("verbs: QP to INIT: %s", strerror(rc));
    ibv_destroy_qp(qp);
    return Status::ErrTransport;
  }
  *out = qp;
  return Status::Ok;
}

Status connectRcQp(const Device& dev, ibv_qp* qp, const QpSettings& s, const QpAddress& peer,
                   uint32_t localPsn) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = static_cast<ibv_mtu>(std::min<int>(dev.portAttr.active_mtu, peer.mtu));
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = static_cast<uint8_t>(
      std::min<int>(s.maxRdAtomic, std::max(1, dev.devAttr.max_qp_rd_atom)));
  a.min_rnr_timer = s.minRnrTimer;
  a.ah_attr.dlid = peer.lid;
  a.ah_attr.sl = s.sl;
  a.ah_attr.src_path_bits = 0;
  a.ah_attr.port_num = dev.port;
  if (dev.roce || peer.hasGid) {
    if (!peer.hasGid || dev.gidIndex < 0) return Status::ErrTransport;  // RoCE needs both GIDs
    a.ah_attr.is_global = 1;
    memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
    a.ah_attr.grh.sgid_index = static_cast<uint8_t>(dev.gidIndex);
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.grh.traffic_class = s.trafficClass;
    a.ah_attr.grh.flow_label = 0;
  }
  if (int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                         IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                         IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
    RRT_WARN("verbs: QP %u to RTR: %s", qp->qp_num, strerror(rc));
    return Status::ErrTransport;
  }
  ibv_qp_attr r{};
  r.qp_state = IBV_QPS_RTS;
  r.timeout = s.timeout;
  r.retry_cnt = s.retryCnt;
  r.rnr_retry = s.rnrRetry;
  r.sq_psn = localPsn;
  r.max_rd_atomic = static_cast<uint8_t>(
      std::min<int>(s.maxRdAtomic, std::max(1, dev.devAttr.max_qp_init_rd_atom)));
  if (int rc = ibv_modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                         IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                         IBV_QP_MAX_QP_RD_ATOMIC)) {
    RRT_WARN("verbs: QP %u to RTS: %s", qp->qp_num, strerror(rc));
    return Status::ErrTransport;
  }
  return Status::Ok;
}

}  // namespace rrt::transport::verbs
