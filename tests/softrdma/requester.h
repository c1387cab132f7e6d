// Requester side of an RC/UC QP: the send queue of the software RDMA device.
// Contract (engine lock held for all): requesterPostSend validates and queues work requests
// (errno on a bad one, as ibv_post_send); requesterPump transmits queued WQEs, up to kSendWindow
// in flight, in order; acknowledgements complete them in order; NAKs model RNR retry (rnr_retry,
// 7 = forever, waiting the responder's min_rnr_timer), PSN sequence recovery (go-back-N) and
// remote errors (completion with the matching status, then the QP enters ERR and is flushed),
// and the ACK timeout (timeout, retry_cnt) when the destination QP is missing or not ready or its
// process is gone: retransmit after 4.096 us * 2^timeout, then IBV_WC_RETRY_EXC_ERR.
// Local SGE checks (lkey, PD, bounds, local write) happen at transmit time and complete with
// IBV_WC_LOC_PROT_ERR in order, as a NIC's would.
#pragma once

#include <chrono>

#include "tests/softrdma/engine.h"

namespace rrt::tests::softrdma {

int requesterPostSend(Engine& engine, Qp& qp, ibv_send_wr* wr, ibv_send_wr** badWr);
void requesterPump(Engine& engine, Qp& qp);
void requesterHandleAck(Engine& engine, const PacketHeader& ack);
// Fires due RNR retry timers; returns the next deadline (time_point::max() if none).
std::chrono::steady_clock::time_point requesterRunTimers(Engine& engine,
                                                         std::chrono::steady_clock::time_point now);
// The process behind the QP's destination is gone: an ACK timeout, as above.
void requesterPeerUnreachable(Engine& engine, uint32_t qpn, uint32_t psn);

}  // namespace rrt::tests::softrdma
