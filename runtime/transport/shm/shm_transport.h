// The shared-memory transport: active messages through per-pair rings in one node-wide segment
// (segment.h, ring.h), one-sided get/put by CMA (cma.h).
//
// Contract beyond transport.h:
//   create()   needs ctx.localPeers to hold this rank and at least one other; with this rank alone
//              on the node it returns nullptr and ErrUnsupported (nothing to serve). The lowest
//              local rank creates /dev/shm/rrt-<jobId>-n<leader>-shm here, before the PMIx fence.
//              Reads RRT_SHM_RING_BYTES (rounded up to a power of two, 4K..1G; when not set, 256K
//              shrunk for crowded nodes so the segment stays within ~256 MiB), RRT_SHM_CMA and
//              RRT_SHM_CMA_SPLIT (auto 512K; 0 = never split).
//   start()    the other local ranks map the segment; the last one to map it unlinks the name.
//              From here on amSend works to every local peer and progress() polls them all.
//   connect()  checks the peer's blob (pid, local index, sizes); needed before get/put.
//   amSend()   copies into the ring; Ok, NoResource when the ring is full (never blocks),
//              ErrProcFailed once the peer was found dead. Caps: kAmBcopy | kOrdered.
//   get/put()  process_vm_readv/writev against the peer's virtual address; rkey unused (may be
//              empty), memReg not needed. Ok when done, ErrUnsupported when CMA is off or the
//              peer refuses it (remembered per peer), ErrProcFailed when it is gone. A get or
//              put of RRT_SHM_CMA_SPLIT bytes or more with a Completion is split with the peer
//              (cma_split.h): the peer moves the tail from its progress() (get: writes it to
//              us; put: reads it from us) while we move the head; InProgress when the peer took
//              the tail (the Completion fires from our progress() once it is done, or with
//              ErrProcFailed if the peer dies first), Ok when the peer had not started and we
//              moved the tail too. Everything else is synchronous. Caps: kPutDelivered with
//              CMA (a put's Ok or Completion means the data is in the peer's memory).
//   progress() delivers up to a batch of records per peer, straight from the ring, in order.
//              A handler that re-enters progress() gets 0 (the record it holds is still in use).
//   Peer death is noticed when a ring to the peer stays full (its process is looked at every
//   10 ms while it does) or when CMA reports ESRCH; ctx.peerFailed is then called once for
//   that peer.
#pragma once

#include "runtime/core/status.h"
#include "runtime/transport/transport.h"

namespace rrt::transport::shm {

TransportPtr create(const Context& ctx, Status* st);

}  // namespace rrt::transport::shm
