// RC queue pairs: creation and the RESET -> INIT -> RTR -> RTS transitions with the attributes
// InfiniBand and RoCE need (a GRH with the peer's GID, traffic class and hop limit on RoCE; the
// LID and service level on IB).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/transport/verbs/address.h"
#include "runtime/transport/verbs/device.h"

namespace rrt::transport::verbs {

struct QpSettings {
  uint32_t sendDepth = 256;   // send work requests
  uint32_t maxInline = 256;   // asked; the device may give less (read back)
  uint8_t maxRdAtomic = 16;   // RDMA READs in flight, each way
  uint8_t timeout = 18;       // local ACK timeout, 4.096 us * 2^timeout
  uint8_t retryCnt = 7;
  uint8_t rnrRetry = 7;       // 7 = retry forever (credits make RNR rare; never fatal)
  uint8_t minRnrTimer = 12;   // 0.64 ms
  uint8_t sl = 0;
  uint8_t trafficClass = 0;
};

// Creates an RC QP on cq/srq and moves it to INIT. *maxInline is what the device granted.
Status createRcQp(const Device& dev, ibv_cq* cq, ibv_srq* srq, const QpSettings& s,
                  ibv_qp** out, uint32_t* maxInline);
// INIT -> RTR -> RTS against the peer's address. localPsn: the PSN we published.
Status connectRcQp(const Device& dev, ibv_qp* qp, const QpSettings& s, const QpAddress& peer,
                   uint32_t localPsn);

}  // namespace rrt::transport::verbs
