// Packets between the per-process engines of the software RDMA device.
// Contract: every packet is a PacketHeader followed by numSge WireSge entries, `size` bytes in all;
// several packets are packed back to back into one Unix datagram. Requests go requester ->
// responder, Ack/Nak come back. Data never travels in packets: the responder moves it with
// process_vm_readv/writev between the two address spaces (WireSge addresses are the requester's).
#pragma once

#include <cstddef>
#include <cstdint>

namespace rrt::tests::softrdma {

enum class PacketOp : uint8_t {
  kSend = 1,      // WireSge: requester's source buffers
  kWrite = 2,     // WireSge: source; rkey/raddr/length: the responder's target
  kRead = 3,      // WireSge: requester's destination buffers
  kCompSwap = 4,  // WireSge: one 8-byte destination for the original value
  kFetchAdd = 5,
  kAck = 6,       // syndrome says success or which NAK
};

enum PacketFlags : uint8_t {
  kFlagImm = 1,        // immediate data present (SEND_WITH_IMM, WRITE_WITH_IMM)
  kFlagSolicited = 2,  // IBV_SEND_SOLICITED
};

// AETH-like syndromes carried by kAck.
enum class Syndrome : uint8_t {
  kAck = 0,
  kRnrNak = 1,        // no receive WQE; rnrTimer carries the responder's min_rnr_timer
  kSeqNak = 2,        // PSN out of sequence; psn carries the expected PSN
  kRemAccessNak = 3,  // bad rkey, bounds, access flags or PD
  kRemInvReqNak = 4,  // request the responder cannot accept (too long, misaligned atomic)
  kRemOpNak = 5,      // responder-side failure (bad receive WQE, unreadable requester memory)
  kNoQp = 6,          // destination QP missing / not ready: models a transport timeout
};

struct WireSge {
  uint64_t addr;
  uint64_t length;
};
static_assert(sizeof(WireSge) == 16);

struct PacketHeader {
  uint32_t size;    // header + sges, bytes
  uint32_t dstQpn;  // QP that handles it
  uint32_t srcQpn;  // QP that sent it
  uint32_t psn;     // request: its PSN; ack: the PSN acknowledged (or expected, for kSeqNak)
  PacketOp op;
  uint8_t flags;
  Syndrome syndrome;
  uint8_t numSge;
  uint32_t imm;  // network byte order, as the application gave it
  uint32_t rkey;
  uint32_t rnrTimer;
  uint64_t raddr;
  uint64_t length;  // total bytes of the operation
  uint64_t compareAdd;
  uint64_t swap;
  int32_t srcPid;  // process whose memory the WireSge addresses name
  uint32_t reserved;
};
static_assert(sizeof(PacketHeader) == 72);
static_assert(offsetof(PacketHeader, raddr) == 32);

inline constexpr size_t kMaxPacketBytes = sizeof(PacketHeader) + 16 * sizeof(WireSge);
inline constexpr size_t kMaxDatagramBytes = 60 * 1024;

}  // namespace rrt::tests::softrdma
