// The protocol engine: the process's transports, its peers, tag matching, and the eager and
// rendezvous protocols on top of the transport interface.
//
// Protocols (chosen per message from the peer's transport capabilities and RRT_* settings):
//   eager      header + payload in one active message; longer eager messages continue in
//              EagerFrag messages (the transport keeps them in order). Receive: one copy out of
//              the transport into the user buffer, or into a pool buffer when unexpected.
//   rendezvous RTS carries size (and for Get the sender's address + rkey). On match the
//              receiver either reads the data with get() and sends FIN (RGET), or answers CTS
//              and the sender writes with put() then FIN (RPUT), or answers CTS and the sender
//              streams Data fragments through active messages (pipelined copy, for transports
//              without one-sided operations, for sizes where copying wins, or when get() is
//              refused, e.g. CMA denied).
//   sync       an eager ssend waits for an Ack sent on match; rendezvous implies the match.
//   cancel     a send not yet out is dropped locally; otherwise (standard eager already out,
//              ssend waiting for its Ack, RTS out) a Cancel follows the message and the
//              receiver answers whether it took the message out of its unexpected queue. A
//              send that had matched completes normally; status.cancelled says which.
//   device     a large message from GPU memory (gpu::sendProto) always goes rendezvous: Ipc
//              (same node: the RTS carries a CUDA IPC reference, the receiver copies and sends
//              FIN) or Copy with the sender's Data fragments fed by a pipeline of device->host
//              chunk copies; a receiver with a device buffer copies each arrived chunk on to
//              the device. Their device work is polled from gpuActive_ (empty on host runs).
//
// Flow control: an operation that meets NoResource waits on its peer's pending list (sends)
// or control queue (CTS/FIN/Ack), retried from progress in order, so per-peer order holds.
//
// Single-threaded; the fast path (eager send, match, complete) allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/list.h"
#include "runtime/core/request.h"
#include "runtime/proto/comm.h"
#include "runtime/proto/matching.h"
#include "runtime/proto/request_ids.h"
#include "runtime/proto/wire.h"
#include "runtime/transport/transport.h"
#include "runtime/wireup/wireup.h"

namespace rrt::proto {

// Where a request is in its protocol (Request::phase).
enum class Phase : uint8_t {
  None = 0,
  // send side
  EagerSend,    // eager message partly handed to the transport (offset = payload bytes sent)
  WaitAck,      // synchronous eager send: all sent, waiting for the Ack
  RtsSend,      // the RTS still has to go out
  WaitCts,      // RTS sent (Put / Copy): waiting for the CTS
  WaitFin,      // RTS sent (Get): waiting for the receiver's FIN
  PutSend,      // after CTS: putting data (offset = bytes issued)
  DataSend,     // after CTS: streaming Data fragments (offset = bytes sent)
  CancelWait,   // standard eager send all out, then cancelled: waiting for the CancelAck
  // receive side
  UnexpEager,   // unexpected eager message: buf = pool buffer, offset = bytes arrived
  UnexpRts,     // unexpected RTS
  RecvEager,    // matched eager message whose fragments are still arriving
  GetIssue,     // reading with get (offset = bytes issued, outstanding = in flight)
  RecvWaitFin,  // Put mode: waiting for the sender's FIN
  RecvData,     // Copy mode: Data fragments arriving (offset = bytes arrived)
  IpcCopy,      // Ipc mode: copying from the sender's device buffer (gpu/rndv.h), then FIN
};

// The memory r->buf is in, for registration: a staged request (gpu::stageSend / stageRecv) has
// memType Cuda, what the user passed and the wire says, but its buffer is the host staging.
inline memory::MemType bufferMemType(const core::Request* r) {
  return r->gpuStage ? memory::MemType::Host : r->memType;
}

// Send-side protocol state in Request::flags (bit 0 is core::kSendSync).
constexpr uint8_t kCancelAsked = 1u << 4;  // cancel requested: Cancel sent, or due once all out
constexpr uint8_t kAcked = 1u << 5;        // the Ack came before the last fragment
constexpr uint8_t kHeaderSent = 1u << 6;   // the opening message is out

// Per-protocol settings of one peer, fixed when it is connected.
struct PeerProto {
  size_t eagerLimit = 0;      // largest eager message
  size_t amPayload = 0;       // payload bytes in one EagerFrag / Data message
  size_t zcopyThreshold = 0;  // from this size, one-sided get/put instead of Copy
  wire::RndvMode zcopyMode = wire::RndvMode::Copy;  // Get, Put, or Copy when neither works
};

// A control message (CTS, FIN, Ack) waiting for transport resources.
struct PendingCtl {
  transport::AmId id;
  uint8_t len;
  uint8_t bytes[sizeof(wire::CtsHeader) + transport::kMaxRkeyBytes];
};

struct Peer {
  transport::Transport* tx = nullptr;   // nullptr until connected
  bool failed = false;
  bool inPendingList = false;
  uint32_t sendSeq = 0;
  uint32_t recvSeq = 0;
  PeerProto proto;
  core::List<core::Request, &core::Request::hook> pending;  // sends waiting, in order
  std::vector<PendingCtl> ctl;          // control messages waiting, in order
  size_t ctlHead = 0;
  core::Request* rxEager = nullptr;     // eager message whose fragments are arriving
  uint64_t bytesSent = 0, msgsSent = 0; // RRT_STATS
};

struct TransportStats {
  uint64_t msgs = 0, bytes = 0;
};

class Engine {
 public:
  Status init();
  // Brings the engine up without PMIx over a given job and transports (fuzzing, in-process
  // tests): transports that publish no address are connected with an empty blob. finalize()
  // then makes no PMIx call either.
  Status initLocal(const wireup::JobInfo& job, std::vector<transport::TransportPtr> transports);
  void finalize();
  // Hands an active message to the engine exactly as a transport does (fuzzing, tests).
  static void deliver(void* engine, int src, transport::AmId id, const void* data, size_t len) {
    onAm(engine, src, id, data, len);
  }
  bool active() const { return active_; }

  const wireup::JobInfo& job() const { return job_; }
  int rank() const { return job_.rank; }
  int size() const { return job_.size; }
  const std::vector<transport::TransportPtr>& transports() const { return transports_; }
  Matcher& matcher() { return matcher_; }
  RequestIds& ids() { return ids_; }

  // The peer with world rank w, connected on first use (nullptr if it cannot be reached).
  Peer* peer(int w) {
    Peer& p = peers_[static_cast<size_t>(w)];
    if (__builtin_expect(p.tx != nullptr, 1)) return &p;
    return connect(w);
  }
  // The protocol settings a message of bytes to peer w would use (rrt_info, tests).
  const char* protocolFor(int w, size_t bytes);
  // The smallest message the transport named transportName moves by a single copy (a zero-copy
  // get or put: CMA on shm), with the settings in force; SIZE_MAX when it never does or is off.
  size_t singleCopyFrom(const char* transportName) const;

  // Send-side entry (p2p.h wraps these): r is a prepared send request.
  Status startSend(core::Request* r);
  // Blocking eager send without a request when everything is free (rrt_send fast path):
  // Ok when sent (*seq, when given, gets its sequence number), NoResource when the caller must
  // take the request path.
  Status trySendInline(Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dst, int tag,
                       uint32_t* seq = nullptr);
  // Receive-side entry: r is a prepared receive request.
  void startRecv(core::Request* r);
  // Receives the unexpected message u (out of its queue) into the receive r, which takes u's
  // envelope; u is released.
  void receiveUnexpected(core::Request* r, core::Request* u);
  // Cancels the send r (cancel.cc): Ok always; r completes (again, if it had) with
  // status.cancelled set or not once the outcome is known.
  Status cancelSend(core::Request* r);

  // Sends a control message now or queues it behind the peer's earlier ones.
  void sendCtl(int w, transport::AmId id, const void* hdr, size_t len);
  // Fails every operation involving peer w.
  void failPeer(int w, Status why);

  void printStats();

 private:
  Peer* connect(int w);
  void choosePeerProto(int w, Peer& p);

  // Active-message handlers.
  static void onAm(void* arg, int src, transport::AmId id, const void* data, size_t len);
  static void onPeerFailed(void* arg, int peer, Status why);
  bool peerFailureAborts() const;
  void onEager(int src, const uint8_t* data, size_t len, bool sync);
  void onEagerFrag(int src, const uint8_t* data, size_t len);
  void onRts(int src, const uint8_t* data, size_t len);
  void onCts(int src, const uint8_t* data, size_t len);
  void onData(int src, const uint8_t* data, size_t len);
  void onFin(int src, const uint8_t* data, size_t len);
  void onAck(int src, const uint8_t* data, size_t len);
  void onCancel(int src, const uint8_t* data, size_t len);
  void onCancelAck(int src, const uint8_t* data, size_t len);

  // Protocol steps.
  Status progressSend(Peer& p, core::Request* r);  // Ok = done with the transport
  void matchEager(core::Request* r, core::Request* u, Peer& p);
  void startRndvRecv(core::Request* r, const wire::RtsHeader& rts, const uint8_t* rkey,
                     const void* ipcRef = nullptr);  // gpu::IpcRef of an Ipc-mode RTS
  // Device rendezvous (gpu/rndv.h): requests whose device work is polled.
  void gpuWatch(core::Request* r);
  void gpuUnwatch(core::Request* r);
  int progressGpu();
  void stepGpu(core::Request* r);
  void startPipeRecv(core::Request* r);
  static Status pipeTransfer(void* arg, size_t index, void* slot, size_t offset, size_t n);
  static bool pipeArrived(void* arg, size_t upTo);
  Status registerRecv(Peer& p, core::Request* r);
  void issueGets(core::Request* r);
  void finishRecv(core::Request* r, Status s);
  void finishSend(core::Request* r, Status s);
  void sendCancel(core::Request* r);  // the Cancel for r, whose message is all out
  void queuePending(Peer& p, core::Request* r);
  static void onGetDone(transport::Completion* c, Status s);
  static void onPutDone(transport::Completion* c, Status s);

  static int poll(void* arg);
  static int idleWait(void* arg, int ms);
  static void checkLiveness(void* arg);  // core's idle check: asks every transport
  int flushPending();

  Status startTransports();

  bool active_ = false;
  bool local_ = false;           // initLocal: no PMIx
  bool finalizing_ = false;      // in finalize's last barrier: peers that leave have finished
  wireup::JobInfo job_;
  std::vector<transport::TransportPtr> transports_;
  std::vector<bool> published_;  // per transport: its address is in PMIx (lookup on connect)
  std::vector<TransportStats> stats_;
  std::vector<Peer> peers_;
  std::vector<int> pendingPeers_;
  core::List<core::Request, &core::Request::hook> getRetry_;
  std::vector<core::Request*> gpuActive_;  // device rendezvous in progress
  Matcher matcher_;
  RequestIds ids_;
  bool stats_on_ = false;
  int idleFd_ = -1;  // the event fd of the only polled transport, when it has one
};

// Inline: the eager fast path of every small send (rrt_send, rrt_isend, RMA's eager puts).
inline Status Engine::trySendInline(Comm& comm, uint32_t ctx, const void* buf, size_t bytes,
                                    int dst, int tag, uint32_t* seq) {
  const int w = comm.worldRank(dst);
  Peer* p = peer(w);
  if (!p->tx || p->failed) return Status::NoResource;  // the request path reports the error
  if (bytes > p->proto.eagerLimit || bytes > p->proto.amPayload || !p->pending.empty())
    return Status::NoResource;
  wire::EagerHeader h;
  h.m.ctx = ctx;
  h.m.src = comm.rank;
  h.m.tag = tag;
  h.m.seq = p->sendSeq;
  h.total = bytes;
  Status st = p->tx->amSend(w, wire::kEager, &h, sizeof h, buf, bytes);
  if (st == Status::Ok) {
    if (seq) *seq = p->sendSeq;
    ++p->sendSeq;
    ++p->msgsSent;
    p->bytesSent += bytes;
  }
  return st == Status::Ok ? Status::Ok : Status::NoResource;
}

// The one engine of the process, never destroyed (requests may outlive finalize). Inline: it
// is called on every send and receive, where an out-of-line call was a measurable share.
inline Engine& engine() {
  static Engine* e = new Engine;
  return *e;
}

}  // namespace rrt::proto
