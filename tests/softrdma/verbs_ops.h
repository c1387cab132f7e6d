// Entry points that the inline functions of <infiniband/verbs.h> reach through
// ibv_context::ops and verbs_context (ibv_post_send, ibv_poll_cq, ibv_query_port, ...).
// Contract: installed by ibv_open_device (verbs_device.cc); defined next to their objects.
// Extended verbs_context ops not listed stay NULL, which the inline helpers report as
// EOPNOTSUPP/ENOSYS, exactly as for a provider that lacks them.
#pragma once

#include <infiniband/verbs.h>

namespace rrt::tests::softrdma {

int postSendOp(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** badWr);
int postRecvOp(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** badWr);
int postSrqRecvOp(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** badWr);
int queryPortOp(ibv_context* context, uint8_t port, ibv_port_attr* attr, size_t size);
int queryDeviceExOp(ibv_context* context, const ibv_query_device_ex_input* input,
                    ibv_device_attr_ex* attr, size_t size);

}  // namespace rrt::tests::softrdma
