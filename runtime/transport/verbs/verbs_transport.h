// The RDMA verbs transport: one RC queue pair per peer, eager active messages by SEND into a
// shared receive queue with per-peer credits, one-sided get/put by RDMA READ/WRITE on registered
// memory through a registration cache.
//
// Contract beyond transport.h:
//   create()   opens the device (device.h; RRT_IB_DEVICES), a PD, one CQ, and per eager class
//              (eager_classes.h; RRT_IB_EAGER_CLASSES, RRT_IB_CREDITS) one SRQ of pre-posted
//              bounce buffers of that class's size; a send bounce pool of the largest size; and
//              chooses the connection manager (RRT_VERBS_CM, address.h): pmix makes one RC QP
//              per class (INIT) for every peer it serves now; rdmacm (one QP per peer, so one
//              class: the largest) opens its listener (rdmacm.h) and makes QPs on first use.
//              It serves every other rank, except, when RRT_TRANSPORTS may enable shm (auto or
//              listing it), the ranks on this node. nullptr and ErrUnsupported when there is no
//              device, no peer to serve, or RRT_VERBS_CM=rdmacm where rdma_cm cannot serve the
//              device.
//   address()  the blob of address.h (version 3): LID, GID, MTU, the eager classes (sizes and
//              the credits granted per peer) and the manager's part: one (QPN, PSN) per world
//              rank and class (pmix) or the rdma_cm listener's address and port.
//   start()    pmix: after the fence, reads every served peer's blob (ctx.lookup) and moves each
//              QP to RTR and RTS. The engine fences once more after start() (kTransports'
//              fenceAfterStart), so no rank sends into a QP that is not yet ready. rdmacm: nothing.
//   connect()  parses the blob (a peer on the other manager, or with another number of classes
//              or a smaller largest class, is refused with a warning); pmix: checks it; rdmacm:
//              starts the handshake toward the peer (or finds it under way or done) and returns
//              at once. Until it is ESTABLISHED amSend/get/put to that peer return NoResource
//              (the protocol queues and retries from progress); nothing is posted to its QP before.
//   amSend()   8-byte AmHeader + hdr + payload in one SEND on the QP of the smallest of the
//              peer's classes that holds it and has a credit (a larger class when the smaller
//              are out of credits): inline (no copy by us) when it fits the QP's
//              max_inline_data, else copied into a registered send buffer. Consumes one credit
//              of that class: NoResource when no class that fits has one, when that QP's send
//              queue is full or no send buffer is free. Credits come back piggy-backed on the
//              peer's SENDs (for the class it owes most), or all classes in an explicit credit
//              message (class 0, which keeps 2 spare buffers per peer for them) once half of a
//              class's are owed and nothing else flows. The AmHeader's per-peer sequence number
//              restores the order of messages that took different QPs: the receiver keeps an
//              early one's buffer (counted against its credits) until those before it came.
//   get/put()  RDMA READ / WRITE (on the last class's QP) of at most caps().maxZcopy bytes; a
//              put's data is in place when its Completion fires, so what is sent after that
//              arrives after it (kOrdered as the protocol uses it: FIN after the puts complete); localMh from memReg, rkey from
//              rkeyPack (4 bytes). InProgress (the Completion fires from progress()), NoResource
//              when the send queue is full or RRT_IB_MAX_RD reads are already in flight.
//   memReg()   through the registration cache (runtime/memory/reg_cache.h): host memory only.
//   progress() polls the CQ in batches of 32: delivers SENDs to the AM handler in sequence and
//              re-posts their buffers to their class's SRQ 16 at a time (one chained
//              ibv_post_srq_recv; each SRQ holds 16 buffers beyond its credits for them),
//              completes send slots in order (a signalled completion retires the unsignalled
//              ones before it), sends owed credits. rdma_cm events: at every call while a
//              handshake is under way; rdma_cm and asynchronous events (non-blocking fds, a
//              system call each) at most every 10 ms otherwise (a vDSO clock, no system call).
//   Errors: a completion with an error status (retry exceeded, RNR retry exceeded, remote access,
//              flush, ...) fails every operation in flight to that peer with ErrProcFailed
//              (ErrTransport for access errors) and reports the peer to ctx.peerFailed: requests
//              end with an error, nothing hangs. The other side learns through an asynchronous
//              event (its QP went to ERR: QP_FATAL / ACCESS_ERR / LAST_WQE_REACHED on an SRQ QP)
//              or, with rdmacm, DISCONNECTED, and fails the peer the same way.
// Caps: kAmBcopy | kGetZcopy | kPutZcopy | kOrdered | kNeedsReg | kPutDelivered.
#pragma once

#include "runtime/core/status.h"
#include "runtime/transport/transport.h"

namespace rrt::transport::verbs {

TransportPtr create(const Context& ctx, Status* st);

}  // namespace rrt::transport::verbs
