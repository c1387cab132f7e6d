// What the TCP transport puts on a connection: a handshake each way, then frames.
//
// Handshake: the connecting side sends a Hello (magic, the job secret, its rank, the rank it
// expects to reach, the stream it opens, how many streams it wants); the accepting side checks every field and answers with
// its own Hello whose verdict says whether this connection is the one both will use (see
// tcp_transport.h for the connect race and the stripe streams). A connection whose first
// kHelloBytes are not a valid Hello is closed and logged; nothing it sent is parsed as a frame.
//
// Frames, in order per connection:
//   AM   FrameHeader{len = bytes after the header, kind = kAm, amId}, then len bytes
//   PUT  PutHeader{FrameHeader{len = payload bytes, kind = kPut}, addr, cookie}, then the
//        payload, which the receiver reads straight into [addr, addr + len) after checking that
//        this range lies in a region it registered under `cookie`.
//   STRIPE_MARK  StripeMark{FrameHeader{len = sizeof(StripeMark) - 8, kind = kStripeMark},
//        bytes[]}: stream 0 only. A put was cut over the stripe streams and bytes[s - 1] of it
//        travel on stream s as PUT frames. The receiver parses nothing after the mark on stream
//        0 until that many more payload bytes have landed from each stripe stream, so frames
//        sent after the put (the protocol's FIN) still arrive after its data.
// Stripe streams (1..streams-1) carry PUT frames only.
// Packed POD, little-endian host order (rrt runs between like hosts), sizes asserted.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rrt::transport::tcp {

constexpr uint8_t kHelloMagic[8] = {'r', 'r', 't', '-', 't', 'c', 'p', '1'};
constexpr size_t kSecretBytes = 32;
// Connections per peer pair at most (RRT_TCP_STREAMS): the first plus the stripe streams.
constexpr uint32_t kMaxStreams = 8;

enum Verdict : uint32_t { kVerdictNone = 0, kVerdictAccept = 1, kVerdictReject = 2 };

struct Hello {
  uint8_t magic[8];
  uint8_t secret[kSecretBytes];
  int32_t rank;      // the sender's world rank
  int32_t peer;      // the world rank the sender expects at the other end
  uint32_t size;     // world size as the sender knows it
  uint32_t verdict;  // connector: kVerdictNone; acceptor: accept or reject
  uint32_t stream;   // 0: the connection of the pair; 1..kMaxStreams-1: a stripe stream
  uint16_t streams;  // connections the sender wants per pair (RRT_TCP_STREAMS): the pair
                     // runs the smaller of the two numbers
  uint16_t pad;
} __attribute__((packed));
static_assert(sizeof(Hello) == 64, "a Hello is 64 bytes");
constexpr size_t kHelloBytes = sizeof(Hello);

enum FrameKind : uint8_t { kAm = 1, kPut = 2, kStripeMark = 3 };

struct FrameHeader {
  uint32_t len;  // bytes that follow this header (AM) or the PutHeader (PUT)
  uint8_t kind;  // FrameKind
  uint8_t amId;  // AM: the active-message id
  uint16_t pad;
} __attribute__((packed));
static_assert(sizeof(FrameHeader) == 8, "a frame header is 8 bytes");

struct PutHeader {
  FrameHeader f;
  uint64_t addr;    // destination in the receiver's address space
  uint64_t cookie;  // the packed rkey: names the receiver's registration
} __attribute__((packed));
static_assert(sizeof(PutHeader) == 24, "a put header is 24 bytes");

struct StripeMark {
  FrameHeader f;
  uint32_t bytes[kMaxStreams - 1];  // payload bytes sent on stripe stream 1 + i
  uint32_t pad;
} __attribute__((packed));
static_assert(sizeof(StripeMark) == 40, "a stripe mark is 40 bytes");

}  // namespace rrt::transport::tcp
