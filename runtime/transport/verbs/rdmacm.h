// The verbs transport's second connection manager: librdmacm (RRT_VERBS_CM=rdmacm). Built only
// when configure found librdmacm (RRT_HAVE_RDMACM); runs only where the kernel has rdma_cm
// (/dev/infiniband/rdma_cm: a real RDMA stack, e.g. Soft-RoCE in tests/softroce; never the
// software device of tests/softrdma).
//
// Contract:
//   open()     makes a non-blocking event channel and a listener bound to the IP address of the
//              device's netdev (from its RoCE GID, address.h endpointFromGid) on a free port,
//              and checks that rdma_cm maps that address to the same device and port as the
//              transport's Device. ErrUnsupported when it cannot (no rdma_cm, no IP on the GID,
//              another device): the transport then uses pmix or is not used.
//   connect()  starts the active side toward a peer (address, route, REQ) unless a connection
//              to it exists or is under way; returns at once. Either rank may start: when both
//              do (a crossing), the lower rank's connection survives on both sides — the higher
//              rank accepts the lower one's REQ and drops its own attempt; the lower rank
//              rejects the higher one's REQ with CmReject::Crossing and the higher rank then
//              waits for the incoming one.
//   poll()     reads every pending event (the channel fd is O_NONBLOCK: never blocks) and moves
//              the handshakes on; fails handshakes older than the set-up timeout. Every event
//              is acknowledged before it is acted on, so destroying an id never waits.
//   Handshake: REQ, REP and REJ carry CmPrivate (address.h): magic, job hash, source and
//              destination rank. A REQ that does not name this job and this rank is rejected
//              (without private data) and logged: "verbs: rejected an rdma_cm connection from
//              ADDR: WHY". A REP that does not come from the expected rank fails the peer.
//   QPs:       the transport's own RC QPs (CmOwner::cmQp, on its CQ and SRQ), not rdma_cm's:
//              their numbers travel in the REQ/REP; rdma_init_qp_attr gives the RTR and RTS
//              attributes (path, GID index, MTU, PSNs), then the transport's settings for the
//              ACK timeout and the RNR timer apply. The passive side moves its QP to RTS before
//              it accepts; CmOwner::cmEstablished() comes after rdma_establish() (active side)
//              or the ESTABLISHED event (passive side): nothing is posted to a QP before.
//   Failures:  address/route errors, unreachable, a rejection other than a crossing, a bad REP,
//              DISCONNECTED (the peer's process ended and its ids were destroyed) and a timeout
//              call CmOwner::cmFailed once for that peer.
// Single-threaded: called from the transport's progress() only.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/transport/verbs/address.h"
#include "runtime/transport/verbs/device.h"
#include "runtime/transport/verbs/qp.h"

struct rdma_event_channel;
struct rdma_cm_id;

namespace rrt::transport::verbs {

// What the connection manager asks of the transport.
class CmOwner {
 public:
  // The QP (in INIT) to connect with peer: created on first need, kept while it is unused.
  virtual Status cmQp(int peer, ibv_qp** qp) = 0;
  // The QP to peer is in RTS and the handshake is done: the data path may use it.
  virtual void cmEstablished(int peer) = 0;
  // No connection to peer can be made, or the one there was is gone.
  virtual void cmFailed(int peer, Status why) = 0;

 protected:
  ~CmOwner() = default;
};

// True when this host's kernel offers rdma_cm to user space; else *why says why not.
bool rdmacmAvailable(std::string* why);

class RdmaCm {
 public:
  struct Settings {
    QpSettings qp;           // timeout, retry, RNR retry and timer, rd/atomic depth
    double setupTimeoutS = 30;
  };

  RdmaCm(CmOwner* owner, int rank, int size, uint64_t job);
  ~RdmaCm();
  RdmaCm(const RdmaCm&) = delete;
  RdmaCm& operator=(const RdmaCm&) = delete;

  Status open(const Device& dev, const Settings& s);
  const CmEndpoint& endpoint() const { return self_; }
  Status connect(int peer, const CmEndpoint& ep);
  int poll();
  bool busy() const { return handshakes_ > 0; }

 private:
  enum class State : uint8_t {
    Idle, Resolving, Routing, Requested, AwaitIncoming, Accepted, Established, Failed
  };
  struct Peer {
    State state = State::Idle;
    rdma_cm_id* id = nullptr;
    double deadline = 0;
    CmEndpoint ep{};
    bool haveEp = false;
  };
  struct Event;  // what poll() copies out of an rdma_cm_event before acknowledging it

  bool handshaking(State s) const {
    return s == State::Resolving || s == State::Routing || s == State::Requested ||
           s == State::AwaitIncoming || s == State::Accepted;
  }
  void setState(int peer, State s);
  Status startActive(int peer);
  void onEvent(const Event& e);
  void onConnectRequest(const Event& e);
  void accept(int peer, rdma_cm_id* id);
  void onConnectResponse(int peer, const Event& e);
  void onRejected(int peer, const Event& e);
  Status toRts(rdma_cm_id* id, ibv_qp* qp);
  void fail(int peer, Status why, const char* what);
  void dropId(rdma_cm_id* id);
  int peerOf(const rdma_cm_id* id) const;
  bool sameDevice(const rdma_cm_id* id) const;

  CmOwner* owner_;
  int rank_, size_;
  uint64_t job_;
  Settings s_;
  std::string devName_;
  uint8_t port_ = 0;
  uint8_t rd_ = 1;  // responder resources and initiator depth offered
  rdma_event_channel* channel_ = nullptr;
  rdma_cm_id* listen_ = nullptr;
  CmEndpoint self_{};
  std::vector<Peer> peers_;
  std::vector<rdma_cm_id*> dead_;  // ids of ended connections, destroyed with the manager
  int handshakes_ = 0;
};

}  // namespace rrt::transport::verbs
