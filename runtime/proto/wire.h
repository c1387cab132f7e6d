// Every header rrt puts on the wire, in one place: packed POD structs with their sizes
// asserted. All integers are little-endian host order (rrt runs between like hosts).
//
// A message is an active message whose id (AmId) names the header that opens its data.
// Eager messages carry the payload after the header; a message longer than one active message
// continues in EagerFrag messages that follow it from the same sender, in order.
// Rendezvous: RTS (sender) -> [CTS (receiver)] -> data by get / put / Data fragments -> FIN.
// Send cancel: Cancel (sender, after the whole message) -> CancelAck (receiver): the message
// was taken out of the unexpected queue, or it had matched already.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/transport/transport.h"

namespace rrt::proto::wire {

enum AmId : transport::AmId {
  kEager = 1,      // EagerHeader + payload
  kEagerSync = 2,  // EagerSyncHeader + payload; the receiver answers Ack on match
  kEagerFrag = 3,  // continuation payload of the sender's current eager message (no header)
  kRts = 4,        // RtsHeader + rkey bytes
  kCts = 5,        // CtsHeader + rkey bytes
  kData = 6,       // DataHeader + payload (pipelined-copy rendezvous)
  kFin = 7,        // FinHeader: the rendezvous named by id is done (or failed: status != 0)
  kAck = 8,        // FinHeader: the synchronous send named by id was matched
  kCancel = 9,     // CancelHeader: drop the named message if it has not matched
  kCancelAck = 10, // CancelAckHeader: the answer to a Cancel
  kAmIdCount = 11
};

// The match header: who, what, which context, and the sender's per-peer sequence number.
struct MatchHeader {
  uint32_t ctx;
  int32_t src;   // sender's rank in the communicator
  int32_t tag;
  uint32_t seq;
} __attribute__((packed));
static_assert(sizeof(MatchHeader) == 16, "match header is 16 bytes");

struct EagerHeader {
  MatchHeader m;
  uint64_t total;  // message length; > payload in this AM when EagerFrag messages follow
} __attribute__((packed));
static_assert(sizeof(EagerHeader) == 24, "eager header is 24 bytes");

struct EagerSyncHeader {
  EagerHeader e;
  uint64_t sreq;   // sender's request id, echoed in the Ack
} __attribute__((packed));
static_assert(sizeof(EagerSyncHeader) == 32, "eager sync header is 32 bytes");

// Ipc: the sender's buffer is GPU memory on this node; an IpcRts follows the RTS (rkeyLen 0),
// the receiver copies from the opened CUDA IPC mapping and sends FIN (or CTS Copy to fall back).
enum class RndvMode : uint8_t { Get = 0, Put = 1, Copy = 2, Ipc = 3 };

struct RtsHeader {
  MatchHeader m;
  uint64_t sreq;     // sender's request id
  uint64_t size;     // message length
  uint64_t addr;     // Get: the sender's buffer
  uint8_t mode;      // RndvMode the sender proposes
  uint8_t rkeyLen;   // rkey bytes following the header (Get)
  uint8_t memType;   // memory::MemType of the sender's buffer
  uint8_t pad[5];
} __attribute__((packed));
static_assert(sizeof(RtsHeader) == 48, "RTS header is 48 bytes");

// After an RTS of mode Ipc: the sender's device allocation as CUDA IPC sees it. The receiver
// checks offset + size against allocSize before opening anything.
struct IpcRts {
  uint8_t handle[64];  // CUipcMemHandle of the allocation
  uint64_t base;       // the allocation's base in the sender's address space
  uint64_t bufferId;   // the driver's buffer id: a new one at the same base = a new allocation
  uint64_t allocSize;  // the allocation's length
  uint64_t offset;     // the message's first byte within it
} __attribute__((packed));
static_assert(sizeof(IpcRts) == 96, "IPC RTS extension is 96 bytes");

struct CtsHeader {
  uint64_t sreq;     // the sender's request (from the RTS)
  uint64_t rreq;     // the receiver's request: target of Data / Fin
  uint64_t addr;     // Put: the receiver's buffer
  uint64_t len;      // bytes the receiver takes (<= size: truncation)
  uint8_t mode;      // RndvMode the receiver chose (Put or Copy)
  uint8_t rkeyLen;
  uint8_t pad[6];
} __attribute__((packed));
static_assert(sizeof(CtsHeader) == 40, "CTS header is 40 bytes");

struct DataHeader {
  uint64_t rreq;
  uint64_t offset;
} __attribute__((packed));
static_assert(sizeof(DataHeader) == 16, "data header is 16 bytes");

struct FinHeader {
  uint64_t id;
  int32_t status;   // 0: done; else the sender of the FIN failed its part (an RRT_ERR_* code):
                    // its RDMA READ or WRITE did not complete, the data is not there
  uint32_t pad;
} __attribute__((packed));
static_assert(sizeof(FinHeader) == 16, "fin header is 16 bytes");

// Names a message by what the receiver keeps of it: the context and the sender's per-peer
// sequence number (unique among its unmatched messages); the transport keeps the Cancel
// behind the message it names.
struct CancelHeader {
  uint32_t ctx;
  uint32_t seq;
  uint64_t sreq;     // the sender's request id, echoed in the CancelAck
} __attribute__((packed));
static_assert(sizeof(CancelHeader) == 16, "cancel header is 16 bytes");

struct CancelAckHeader {
  uint64_t sreq;
  uint8_t cancelled;  // 1: removed, never to be received; 0: it had matched (or was unknown)
  uint8_t pad[7];
} __attribute__((packed));
static_assert(sizeof(CancelAckHeader) == 16, "cancel ack header is 16 bytes");

// ---- one-sided operations (runtime/rma) -----------------------------------------------------
// Ride on ordinary point-to-point messages on a window's own context id: every request to a
// target opens with an RmaHeader (tag kRmaHeaderTag), small payloads inline after it; larger
// ones follow as a message of tag rmaDataTag(id) (rendezvous: straight into window memory).
// Answers (acknowledgement: an RmaAck; results: the data) go back with tag rmaReplyTag(id).
enum class RmaOp : uint8_t {
  Put = 1, Get, Acc, GetAcc, Cas,   // data movement
  Lock, Unlock,                     // passive target (answered by an RmaAck: granted / released)
  Post, Complete,                   // generalized active target (no answer)
};
struct RmaHeader {
  uint8_t op;         // RmaOp
  uint8_t lockType;   // Lock: RRT_LOCK_SHARED / RRT_LOCK_EXCLUSIVE
  uint8_t inlined;    // the payload follows the header in the same message
  uint8_t pad;
  int32_t type;       // Acc / GetAcc / Cas: predefined base type of the elements
  int32_t rop;        // Acc / GetAcc: rrt_op_t
  uint32_t id;        // the origin's operation number (tags of the data and the answer)
  uint64_t bytes;     // bytes of target memory accessed
  uint64_t disp;      // target displacement (units of its disp_unit; address when dynamic)
} __attribute__((packed));
static_assert(sizeof(RmaHeader) == 32, "RMA header is 32 bytes");

struct RmaAck {
  int32_t status;     // rrt error code of the operation at the target
  int32_t pad;
} __attribute__((packed));
static_assert(sizeof(RmaAck) == 8, "RMA ack is 8 bytes");

constexpr int kRmaHeaderTag = 0;
constexpr size_t kRmaInlineMax = 224;  // payload bytes carried in the header's message
inline int rmaDataTag(uint32_t id) { return static_cast<int>(2 * (id & 0x1fffffffu) + 1); }
inline int rmaReplyTag(uint32_t id) { return static_cast<int>(2 * (id & 0x1fffffffu) + 2); }

// What each rank tells the others about its window memory when the window is created (one
// allgather over the window's communicator), for the direct path (runtime/rma/direct.cc):
// contiguous puts / gets from RRT_RMA_DIRECT_MIN bytes go through the transport's one-sided
// put / get straight into / out of this memory. One remote key per transport that can do it,
// named by the transport (an origin uses the key of the transport that serves the target).
struct RmaWinKey {
  char tx[15];        // Transport::name(), NUL-terminated; empty: unused slot
  uint8_t len;        // bytes of rkey in use (0 for transports without kNeedsReg)
  uint8_t rkey[transport::kMaxRkeyBytes];
} __attribute__((packed));
static_assert(sizeof(RmaWinKey) == 16 + transport::kMaxRkeyBytes, "RMA window key size");

constexpr int kRmaWinKeys = 4;  // self, shm, tcp, verbs
struct RmaWinInfo {
  uint64_t base;      // address of the window memory in its owner
  uint64_t size;      // bytes; 0: no direct access (dynamic or empty window, nothing registered)
  int32_t dispUnit;
  uint32_t pad;
  RmaWinKey keys[kRmaWinKeys];
} __attribute__((packed));
static_assert(sizeof(RmaWinInfo) == 24 + kRmaWinKeys * sizeof(RmaWinKey), "RMA window info size");

}  // namespace rrt::proto::wire
