// The verbs transport's wire formats: the address blob (published through PMIx as "rrt.verbs"),
// the private data of its rdma_cm connection handshake, and its own header on every SEND. All
// are packed PODs with asserted sizes, read only after the checks of address.cc.
//
// Two connection managers (RRT_VERBS_CM; verbs_transport.h says which "auto" takes):
//   pmix    Each rank creates one RC QP per peer it serves and eager class (eager_classes.h)
//           before the fence and publishes its port's LID, GID, active MTU, its eager classes
//           (ClassTable: buffer size and the credits it grants each peer) and, per world rank
//           and class, the QPN and starting PSN of the QP dedicated to that rank and class
//           (count = world size x classes QpSlots, rank-major, follow the ClassTable). After the
//           fence each side reads the peer's blob and moves its QPs to RTR and RTS (qp.h).
//   rdmacm  Each rank listens with librdmacm on the IP address of its RDMA device's netdev (the
//           address its RoCE GID holds) and publishes that address and the listening port (the
//           ClassTable, of one class, then one CmEndpoint follow the header, count is 0). QPs are made lazily, on the first
//           message to a peer, by rdma_cm's address/route resolution and REQ/REP/RTU handshake
//           (rdmacm.h); CmPrivate rides in the REQ, the REP and a REJ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/transport/verbs/eager_classes.h"

namespace rrt::transport::verbs {

constexpr uint32_t kAddrMagic = 0x72727662;  // "rrvb"
constexpr uint16_t kAddrVersion = 3;  // 2: the cm field and the rdmacm endpoint; 3: eager classes

enum class CmKind : uint8_t { Pmix = 0, Rdmacm = 1 };

struct AddressHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t lid;
  uint8_t gid[16];
  uint8_t mtu;        // ibv_mtu enum
  uint8_t hasGid;     // 1: address with a GRH (RoCE, or a GID index chosen on IB)
  uint8_t linkLayer;  // IBV_LINK_LAYER_*
  uint8_t cm;         // CmKind: what follows the header
  uint32_t count;     // Pmix: QpSlot entries that follow, world size x classes; Rdmacm: 0
} __attribute__((packed));
static_assert(sizeof(AddressHeader) == 32, "verbs address header is 32 bytes");

// The receive side's eager classes, right after the header: a sender picks the class for a
// message from the buffer sizes, and starts with the credits the receiver grants it.
struct ClassInfo {
  uint32_t bufBytes;  // multiple of 64, ascending
  uint16_t credits;   // SENDs of this class the peer may have outstanding to the publisher
  uint16_t pad;
} __attribute__((packed));
struct ClassTable {
  uint8_t n;  // 1..kMaxEagerClasses
  uint8_t pad[3];
  ClassInfo cls[kMaxEagerClasses];
} __attribute__((packed));
static_assert(sizeof(ClassTable) == 36, "verbs class table is 36 bytes");

struct QpSlot {
  uint32_t qpn;  // 0: no QP for that rank
  uint32_t psn;
} __attribute__((packed));
static_assert(sizeof(QpSlot) == 8, "verbs QP slot is 8 bytes");

// Where a rank's rdma_cm listener is (CmKind::Rdmacm).
struct CmEndpoint {
  uint8_t family;    // 4 or 6
  uint8_t pad;
  uint16_t port;     // network byte order
  uint8_t addr[16];  // IPv4: the first 4 bytes
} __attribute__((packed));
static_assert(sizeof(CmEndpoint) == 20, "rdma_cm endpoint is 20 bytes");

// What one side needs of the other to bring its QP to RTR (pmix).
struct QpAddress {
  uint16_t lid = 0;
  uint8_t gid[16] = {};
  bool hasGid = false;
  uint8_t mtu = 0;
  uint32_t qpn = 0;
  uint32_t psn = 0;
};

// A peer's blob, parsed for one reader (myRank).
struct PeerAddress {
  CmKind cm = CmKind::Pmix;
  EagerClasses classes; // the peer's receive classes (and the credits it grants us)
  QpAddress qp;         // pmix: the peer's port and its class-0 QP for myRank
  uint32_t qpn[kMaxEagerClasses] = {}, psn[kMaxEagerClasses] = {};  // pmix: per class
  CmEndpoint ep{};      // rdmacm: the peer's listener
  uint8_t linkLayer = 0;
};

// The rdma_cm handshake's private data: REQ (Connect), REP (Accept) and REJ (Reject). rdma_cm
// pads what it delivers (56 bytes of a REQ on RoCE), so a reader checks len >= sizeof.
constexpr uint32_t kCmMagic = 0x72727663;  // "rrvc"
constexpr uint16_t kCmVersion = 1;
enum class CmMsg : uint8_t { Connect = 1, Accept = 2, Reject = 3 };
enum class CmReject : uint8_t {
  None = 0,
  Crossing = 1,   // the rejecter is connecting to the requester itself (lower rank wins)
  Duplicate = 2,  // a connection between the two exists already
};

struct CmPrivate {
  uint32_t magic;
  uint16_t version;
  uint8_t msg;      // CmMsg
  uint8_t reason;   // CmReject (Reject only)
  uint32_t src;     // world rank of the sender of this private data
  uint32_t dst;     // world rank it means to reach
  uint64_t job;     // jobHash() of the job: a stranger (another job, a scanner) is rejected
} __attribute__((packed));
static_assert(sizeof(CmPrivate) == 24, "rdma_cm private data is 24 bytes");

// Opens every SEND payload: which active message (0 = credits only), the credits the sender
// returns for receive buffers of class creditClass it has consumed and re-posted, and the
// per-peer sequence number of the active message (messages of one peer travel on one QP per
// class and are delivered in seq order). A credit-only message carries no seq; its payload is
// one uint16_t per class of the receiver's: the credits returned for each.
struct AmHeader {
  uint8_t id;
  uint8_t creditClass;
  uint16_t credits;
  uint32_t seq;
} __attribute__((packed));
static_assert(sizeof(AmHeader) == 8, "verbs AM header is 8 bytes");

constexpr uint8_t kCreditOnly = 0;  // AmHeader::id of an explicit credit message

// ---- pure helpers (address.cc; unit-tested without a device) -------------------------------

// The blob: the header (version and cm set here; count from the slots), the class table, then
// the QP slots (pmix: world size x classes.n, rank-major) or the endpoint (rdmacm).
void packAddress(AddressHeader h, const EagerClasses& classes, const std::vector<QpSlot>& slots,
                 const CmEndpoint* ep, std::vector<uint8_t>* out);
// ErrWireup for anything malformed: short, wrong magic or version, unknown cm, a class table
// that is empty, too long, not ascending or grants fewer than kMinCredits (or more than one
// class with rdmacm), a count that is not world size x classes (pmix) or not 0 (rdmacm), a
// length that does not match, an MTU outside 256..4096, no QP for myRank in some class, a bad
// endpoint (family, port 0, IPv4 with junk).
Status parseAddress(const void* blob, size_t len, int worldSize, int myRank, PeerAddress* out);

// The endpoint of the IP address a RoCE GID holds: IPv4-mapped (::ffff:a.b.c.d) -> IPv4, a
// global IPv6 GID -> IPv6. ErrUnsupported for a zero, link-local or multicast GID (no usable
// address: rdma_cm needs a routable one). port is left 0.
Status endpointFromGid(const uint8_t gid[16], CmEndpoint* out);
std::string endpointString(const CmEndpoint& ep);  // "10.1.2.3:4791", "[fd00::1]:4791"

// A 64-bit digest of the job's id and secret (FNV-1a): equal for every rank of a job.
uint64_t jobHash(const std::string& jobId, const std::string& secret);

CmPrivate makeCmPrivate(CmMsg msg, int src, int dst, uint64_t job,
                        CmReject reason = CmReject::None);
// Checks private data received in a REQ/REP/REJ: magic, version, msg, job, dst == myRank and a
// src inside the world other than myRank. On success *src is the sender's rank (and *reason the
// reject reason, when asked for); on failure *why says what was wrong (for the log).
Status checkCmPrivate(const void* data, size_t len, CmMsg want, uint64_t job, int worldSize,
                      int myRank, int* src, CmReject* reason, const char** why);

}  // namespace rrt::transport::verbs
