// The RDMA verbs transport: one RC queue pair per peer, eager active messages by SEND into a
// shared receive queue with per-peer credits, one-sided get/put by RDMA READ/WRITE on registered
// memory through a registration cache.
//
// Contract beyond transport.h:
//   create()   opens the device (device.h; RRT_IB_DEVICES), a PD, one CQ, one SRQ of
//              pre-posted bounce buffers (RRT_IB_EAGER_BUF bytes each), a send bounce pool, and
//              chooses the connection manager (RRT_VERBS_CM, address.h): pmix makes one RC QP
//              (INIT) for every peer it serves now; rdmacm opens its listener (rdmacm.h) and
//              makes QPs on first use. It serves every other rank, except, when RRT_TRANSPORTS
//              may enable shm (auto or listing it), the ranks on this node. nullptr and
//              ErrUnsupported when there is no device, no peer to serve, or RRT_VERBS_CM=rdmacm
//              where rdma_cm cannot serve the device.
//   address()  the blob of address.h (version 2): LID, GID, MTU and the manager's part: one
//              (QPN, PSN) per world rank (pmix) or the rdma_cm listener's address and port.
//   start()    pmix: after the fence, reads every served peer's blob (ctx.lookup) and moves each
//              QP to RTR and RTS. The engine fences once more after start() (kTransports'
//              fenceAfterStart), so no rank sends into a QP that is not yet ready. rdmacm: nothing.
//   connect()  parses the blob (a peer on the other manager is refused with a warning); pmix:
//              checks it; rdmacm: starts the handshake toward the peer (or finds it under way or
//              done) and returns at once. Until it is ESTABLISHED amSend/get/put to that peer
//              return NoResource (the protocol queues and retries from progress); nothing is
//              posted to its QP before.
//   amSend()   4-byte AmHeader + hdr + payload in one SEND: inline (no copy by us) when it fits
//              the QP's max_inline_data, else copied into a registered send buffer. Consumes one
//              credit: NoResource when the peer has none left, when the send queue is full or no
//              send buffer is free. Credits come back piggy-backed on the peer's SENDs, or in an
//              explicit credit message once half of them are owed and nothing else flows.
//   get/put()  RDMA READ / WRITE of at most caps().maxZcopy bytes; localMh from memReg, rkey from
//              rkeyPack (4 bytes). InProgress (the Completion fires from progress()), NoResource
//              when the send queue is full or RRT_IB_MAX_RD reads are already in flight.
//   memReg()   through the registration cache (runtime/memory/reg_cache.h): host memory only.
//   progress() polls the CQ in batches of 32: delivers SENDs to the AM handler and re-posts their
//              buffers to the SRQ at once, completes send slots in order (a signalled completion
//              retires the unsignalled ones before it), sends owed credits. rdma_cm events: at
//              every call while a handshake is under way; rdma_cm and asynchronous events
//              (non-blocking fds, a system call each) at every 256th call otherwise.
//   Errors: a completion with an error status (retry exceeded, RNR retry exceeded, remote access,
//              flush, ...) fails every operation in flight to that peer with ErrProcFailed
//              (ErrTransport for access errors) and reports the peer to ctx.peerFailed: requests
//              end with an error, nothing hangs. The other side learns through an asynchronous
//              event (its QP went to ERR: QP_FATAL / ACCESS_ERR / LAST_WQE_REACHED on an SRQ QP)
//              or, with rdmacm, DISCONNECTED, and fails the peer the same way.
// Caps: kAmBcopy | kGetZcopy | kPutZcopy | kOrdered | kNeedsReg.
#pragma once

#include "runtime/core/status.h"
#include "runtime/transport/transport.h"

namespace rrt::transport::verbs {

TransportPtr create(const Context& ctx, Status* st);

}  // namespace rrt::transport::verbs
