// The RC/UC queue-pair state machine of the software RDMA device.
// Contract: validateModify is pure: 0 or EINVAL, following the IB spec's transition table
// (required and optional attribute masks per transition, as the kernel's ib_modify_qp_is_ok) plus
// the device's value limits. applyModify performs a validated transition (engine lock held).
// enterError moves a QP to ERR and flushes its send and receive queues with IBV_WC_WR_FLUSH_ERR.
// Not implemented (abort): SQD (drain) and alternate paths (APM).
#pragma once

#include "tests/softrdma/engine.h"

namespace rrt::tests::softrdma {

int validateModify(const Qp& qp, const ibv_qp_attr& attr, int mask);
void applyModify(Engine& engine, Qp& qp, const ibv_qp_attr& attr, int mask);
void enterError(Engine& engine, Qp& qp);

}  // namespace rrt::tests::softrdma
