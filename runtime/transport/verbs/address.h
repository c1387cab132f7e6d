// The verbs transport's address blob (published through PMIx as "rrt.verbs") and the transport's
// own header on every SEND. Both are packed PODs with asserted sizes, read only after checks.
//
// Connection path implemented: PMIx-exchanged QP attributes. Each rank creates one RC QP per
// peer it serves before the fence and publishes its port's LID, GID, active MTU and, per world
// rank, the QPN and starting PSN of the QP dedicated to that rank. After the fence each side
// reads the peer's blob and moves its QP to RTR (peer QPN/PSN/LID/GID) and RTS. A second
// connection manager (librdmacm, for RoCE fabrics that need address resolution) would fill the
// same QpAddress from its own exchange (qp.h takes a QpAddress, not a blob).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rrt::transport::verbs {

constexpr uint32_t kAddrMagic = 0x72727662;  // "rrvb"
constexpr uint16_t kAddrVersion = 1;

struct AddressHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t lid;
  uint8_t gid[16];
  uint8_t mtu;        // ibv_mtu enum
  uint8_t hasGid;     // 1: address with a GRH (RoCE, or a GID index chosen on IB)
  uint8_t linkLayer;  // IBV_LINK_LAYER_*
  uint8_t pad;
  uint32_t count;     // QpSlot entries that follow: one per world rank
} __attribute__((packed));
static_assert(sizeof(AddressHeader) == 32, "verbs address header is 32 bytes");

struct QpSlot {
  uint32_t qpn;  // 0: no QP for that rank
  uint32_t psn;
} __attribute__((packed));
static_assert(sizeof(QpSlot) == 8, "verbs QP slot is 8 bytes");

// What one side needs of the other to bring its QP to RTR.
struct QpAddress {
  uint16_t lid = 0;
  uint8_t gid[16] = {};
  bool hasGid = false;
  uint8_t mtu = 0;
  uint32_t qpn = 0;
  uint32_t psn = 0;
};

// Opens every SEND/SEND payload: which active message (0 = credits only) and the credits the
// sender returns for receive buffers of ours it has consumed and re-posted.
struct AmHeader {
  uint8_t id;
  uint8_t flags;
  uint16_t credits;
} __attribute__((packed));
static_assert(sizeof(AmHeader) == 4, "verbs AM header is 4 bytes");

constexpr uint8_t kCreditOnly = 0;  // AmHeader::id of an explicit credit message

}  // namespace rrt::transport::verbs
