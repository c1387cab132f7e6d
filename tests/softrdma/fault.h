// Fault injection, opt-in (SOFTRDMA_FAULT=read:N or write:N): the N-th RDMA READ (or WRITE) this
// process posts goes out with a remote key that names no MR, so the responder refuses it as
// hardware refuses a bad rkey: IBV_WC_REM_ACCESS_ERR at the requester, both QPs in ERR, and the
// responder's QP (on an SRQ) reports IBV_EVENT_QP_LAST_WQE_REACHED. It lets a test make one
// transfer in the middle of a protocol fail (tests/mp/p2p_rdma_fault.c).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace rrt::tests::softrdma {

// The rkey to send for a request with this opcode: rkey itself, or a bad one when this is the
// request SOFTRDMA_FAULT names.
uint32_t faultRkey(ibv_wr_opcode op, uint32_t rkey);

}  // namespace rrt::tests::softrdma
