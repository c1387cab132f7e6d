// The transport interface: how the protocol layer moves bytes to a peer.
//
// Shaped after UCX's UCT, trimmed. A Transport is one way of reaching peers (self, shm, tcp,
// verbs); the protocol layer holds one instance of each that is enabled and asks each peer's
// reachable() to decide which one serves it.
//
// Lifecycle (driven by runtime/proto/engine.cc):
//   1. create<Name>(ctx)         construct; may create local resources (a segment, a socket).
//   2. address(&blob)            bytes published through PMIx for the peers; may be empty.
//   3. (PMIx fence)
//   4. start()                   everything that needed the fence (attaching to a segment).
//   5. connect(peer, blob)       once per peer served by this transport, lazily, before the
//                                first operation to that peer. The blob is the peer's address().
//   6. data path: amSend / get / put / progress, from one thread.
//   7. destructor                after the last operation completed (or the job is dying).
//
// Return codes of every data-path operation:
//   Ok          done: the transport no longer needs the caller's buffers.
//   InProgress  accepted: the Completion fires later, from progress(), exactly once.
//   NoResource  nothing was done (ring full, no credits, no work-request slot): the protocol
//               queues the operation on the peer's pending list and retries it from progress.
//   an error    nothing was done and nothing will be; ErrUnsupported from get/put means this
//               peer refuses one-sided access (e.g. CMA denied) and the protocol must use
//               another path; ErrProcFailed means the peer is gone.
//
// The fast path allocates nothing, takes no lock and makes no system call it can avoid.
// Transports deliver active messages to the one AmHandler in the context: in order per peer
// when Caps has kOrdered, with data valid only during the call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/memory/mem_type.h"

namespace rrt::transport {

using memory::MemType;

// Capability flags (Caps::flags).
enum CapFlag : uint32_t {
  kAmBcopy = 1u << 0,    // amSend copies header + payload out before returning Ok
  kPutZcopy = 1u << 1,   // put(): write local memory into a registered remote region
  kGetZcopy = 1u << 2,   // get(): read a registered remote region into local memory
  kOrdered = 1u << 3,    // active messages and puts to one peer arrive in the order sent
  kNeedsReg = 1u << 4,   // memReg must be called for buffers used by get/put
  kEventFd = 1u << 5,    // eventFd() returns an fd that becomes readable on new events
  kPutDelivered = 1u << 6,  // a put's Ok / Completion means the data is in the peer's memory
                            // (without it, only a later message on the ordered path proves it)
};

// What the protocol layer may rely on. Plain data, checked against the implementation by a
// unit test per transport.
struct Caps {
  uint32_t flags = 0;
  size_t maxAm = 0;           // largest header + payload one amSend carries
  size_t minZcopy = 0;        // get/put below this are not worth it
  size_t maxZcopy = 0;        // largest single get/put (the protocol splits larger ones)
  uint32_t zcopyMemTypes = 0; // bit mask of memTypeBit(MemType) that get/put move directly
  double latencyUs = 0;       // one-way latency estimate
  double bandwidthMBs = 0;    // bandwidth estimate for large transfers
  size_t eagerDefault = 0;    // suggested eager/rendezvous boundary for host memory
};

// Intrusive completion: embedded in the object that waits (a request, a rendezvous state).
struct Completion {
  void (*fn)(Completion* self, Status status) = nullptr;
};

// A memory registration in this transport's memory domain. Transports derive from it.
struct MemHandle {
  void* addr = nullptr;
  size_t length = 0;
  virtual ~MemHandle() = default;
};

constexpr size_t kMaxRkeyBytes = 64;  // a packed remote key fits in this many bytes

// Active-message ids (what the protocol layer puts in the first byte of each message). Ids from
// kTransportAmIds up are reserved for a transport's own messages (shm's split-copy requests):
// the protocol never uses them; shm's amSend refuses them (ErrArg) and they never reach the
// AmHandler.
using AmId = uint8_t;
constexpr AmId kTransportAmIds = 0xf0;

// Receives active messages: data = the header followed by the payload, len bytes in all,
// valid only during the call. src is the sender's world rank.
using AmHandler = void (*)(void* arg, int src, AmId id, const void* data, size_t len);
// Told when a peer is found dead or unreachable; requests to it must fail.
using PeerFailedHandler = void (*)(void* arg, int peer, Status why);

// What a transport learns at creation.
struct Context {
  int rank = 0;                  // world rank of this process
  int size = 1;                  // world size
  std::vector<int> localPeers;   // world ranks on this node (PMIx), ascending, self included
  std::vector<uint32_t> nodeOf;  // node id of every world rank (PMIx)
  std::string jobId;             // unique per job (PMIx namespace), safe for file names
  std::string secret;            // the job's secret bytes from the launcher (PMIx), or empty
  AmHandler amHandler = nullptr;
  PeerFailedHandler peerFailed = nullptr;
  void* handlerArg = nullptr;
  // Fetches a peer's published address blob (key "rrt.<name>") after the fence, for transports
  // whose start() must reach every peer (verbs: QPs to RTR). The engine wires it to PMIx.
  Status (*lookup)(int peer, const std::string& key, std::vector<uint8_t>* out) = nullptr;
};

class Transport {
 public:
  virtual ~Transport() = default;

  virtual const char* name() const = 0;
  virtual const Caps& caps() const = 0;
  // One line of device details for rrt_info (empty when there is nothing beyond caps()).
  virtual std::string describe() const { return std::string(); }
  // How this transport reached peer (RRT_STATS), e.g. a connection's local and remote socket
  // addresses; empty when there is nothing beyond the transport's name. Not for the fast path.
  virtual std::string route(int peer) const { return std::string(); }

  // Wire-up (see the lifecycle above).
  virtual Status address(std::vector<uint8_t>* blob) = 0;
  virtual Status start() { return Status::Ok; }
  virtual bool reachable(int peer) const = 0;
  virtual Status connect(int peer, const void* blob, size_t len) = 0;

  // Active message: copies id + hdr + payload to the peer. hdrLen + len <= caps().maxAm.
  virtual Status amSend(int peer, AmId id, const void* hdr, size_t hdrLen, const void* payload,
                        size_t len) = 0;

  // One-sided operations against a region the peer registered and described by rkey.
  virtual Status get(int peer, void* local, size_t len, MemHandle* localMh, uint64_t remoteAddr,
                     const void* rkey, size_t rkeyLen, Completion* done) {
    return Status::ErrUnsupported;
  }
  virtual Status put(int peer, const void* local, size_t len, MemHandle* localMh,
                     uint64_t remoteAddr, const void* rkey, size_t rkeyLen, Completion* done) {
    return Status::ErrUnsupported;
  }

  // Memory domain. memReg returns a handle that stays valid until memDereg; rkeyPack writes at
  // most kMaxRkeyBytes and returns how many.
  virtual Status memReg(void* addr, size_t len, MemType type, MemHandle** out) {
    *out = nullptr;
    return Status::Ok;
  }
  virtual void memDereg(MemHandle* mh) {}
  virtual size_t rkeyPack(const MemHandle* mh, void* out) const { return 0; }

  // Polls for incoming messages and completions; returns how many events it handled.
  virtual int progress() = 0;
  // With kEventFd: an fd to sleep on (readable when progress() has work), else -1.
  virtual int eventFd() const { return -1; }
  // With kEventFd: called right before the caller sleeps on eventFd() (an edge-triggered fd,
  // such as a verbs completion channel, is armed here). False when work came in meanwhile:
  // the caller must not sleep, but call progress() again.
  virtual bool armEventFd() { return true; }
  // True when nothing accepted by amSend/put still waits inside the transport to be written
  // (finalize keeps progressing until it is, so queued messages are not lost).
  virtual bool flushed() const { return true; }
  // Releases peer resources when the peer is known to be gone (optional).
  virtual void disconnect(int peer) {}
  // Called now and then while a rank waits with nothing to do: a transport that would not
  // otherwise notice a peer's death (a receive from it just never completes) looks whether one
  // peer, the next in turn, is still alive, and reports a dead one through peerFailed.
  virtual void checkLiveness() {}
};

using TransportPtr = std::unique_ptr<Transport>;

}  // namespace rrt::transport
