// Responder side of an RC/UC QP: receive queue, SRQ and the execution of incoming requests.
// Contract (engine lock held): requests are executed strictly in PSN order. The responder checks
// everything a NIC checks against its own tables: QP state and peer, PSN, receive WQE (RNR NAK if
// none, then requests are dropped until the NAKed PSN comes back), QP access flags, rkey, MR
// access, PD and bounds (IBV_WC_REM_ACCESS_ERR at the requester; the responder QP enters ERR),
// receive-buffer length and lkeys. Payload moves by CMA directly between the two address spaces.
// UC: no RNR and no NAKs; a message that cannot be delivered is dropped and the requester completes.
#pragma once

#include "tests/softrdma/engine.h"

namespace rrt::tests::softrdma {

int responderPostRecv(Engine& engine, Qp& qp, ibv_recv_wr* wr, ibv_recv_wr** badWr);
int responderPostSrqRecv(Srq& srq, ibv_recv_wr* wr, ibv_recv_wr** badWr);
void responderHandleRequest(Engine& engine, const PacketHeader& request, const WireSge* sges);

}  // namespace rrt::tests::softrdma

// Not a verbs call (version SOFTRDMA_PRIVATE): how many RNR NAKs this process's responder has
// sent since it opened the device, for tests that must show no SEND met an empty receive queue
// (rrt's credits: "never an RNR retry storm"). A test finds it with dlsym(RTLD_DEFAULT, ...).
extern "C" unsigned long long softrdma_rnr_naks_sent(void);
