#include "runtime/transport/verbs/rdmacm.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "runtime/core/log.h"
#include "runtime/core/progress.h"

namespace rrt::transport::verbs {
namespace {

// Address and route resolution, each try. A try that fails (timeout on a loaded or emulated
// host) is repeated until the connection's RRT_VERBS_CM_TIMEOUT deadline.
constexpr int kResolveMs = 5000;
constexpr int kBacklog = 128;
constexpr size_t kPrivMax = 64;

void toSockaddr(const CmEndpoint& ep, sockaddr_storage* ss) {
  memset(ss, 0, sizeof *ss);
  if (ep.family == 4) {
    auto* s = reinterpret_cast<sockaddr_in*>(ss);
    s->sin_family = AF_INET;
    s->sin_port = ep.port;
    memcpy(&s->sin_addr, ep.addr, 4);
  } else {
    auto* s = reinterpret_cast<sockaddr_in6*>(ss);
    s->sin6_family = AF_INET6;
    s->sin6_port = ep.port;
    memcpy(&s->sin6_addr, ep.addr, 16);
  }
}

std::string addrString(const sockaddr* sa) {
  char ip[INET6_ADDRSTRLEN] = "?";
  char buf[INET6_ADDRSTRLEN + 16];
  if (sa && sa->sa_family == AF_INET) {
    const auto* s = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &s->sin_addr, ip, sizeof ip);
    snprintf(buf, sizeof buf, "%s:%u", ip, ntohs(s->sin_port));
  } else if (sa && sa->sa_family == AF_INET6) {
    const auto* s = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &s->sin6_addr, ip, sizeof ip);
    snprintf(buf, sizeof buf, "[%s]:%u", ip, ntohs(s->sin6_port));
  } else {
    snprintf(buf, sizeof buf, "?");
  }
  return buf;
}

void* contextOf(int peer) { return reinterpret_cast<void*>(static_cast<uintptr_t>(peer) + 1); }

}  // namespace

struct RdmaCm::Event {
  rdma_cm_event_type type;
  int status;
  rdma_cm_id* id;
  uint8_t priv[kPrivMax];
  size_t privLen;
};

bool rdmacmAvailable(std::string* why) {
  if (access("/dev/infiniband/rdma_cm", R_OK | W_OK) == 0) return true;
  *why = std::string("/dev/infiniband/rdma_cm: ") + strerror(errno) +
         " (no kernel rdma_cm: rdma_ucm not loaded, or no kernel RDMA stack)";
  return false;
}

RdmaCm::RdmaCm(CmOwner* owner, int rank, int size, uint64_t job)
    : owner_(owner), rank_(rank), size_(size), job_(job) {}

RdmaCm::~RdmaCm() {
  for (Peer& p : peers_)
    if (p.id) rdma_destroy_id(p.id);
  for (rdma_cm_id* id : dead_) rdma_destroy_id(id);
  if (listen_) rdma_destroy_id(listen_);
  if (channel_) rdma_destroy_event_channel(channel_);
}

bool RdmaCm::sameDevice(const rdma_cm_id* id) const {
  return id->verbs && id->verbs->device && devName_ == ibv_get_device_name(id->verbs->device) &&
         id->port_num == port_;
}

Status RdmaCm::open(const Device& dev, const Settings& s) {
  s_ = s;
  devName_ = dev.name;
  port_ = dev.port;
  std::string why;
  if (!rdmacmAvailable(&why)) {
    RRT_INFO("verbs: rdma_cm unavailable: %s", why.c_str());
    return Status::ErrUnsupported;
  }
  if (!dev.roce || dev.gidIndex < 0 || endpointFromGid(dev.gid.raw, &self_) != Status::Ok) {
    RRT_INFO("verbs: rdma_cm needs a RoCE port whose GID holds an IP address (%s port %u: %s)",
             dev.name.c_str(), dev.port, dev.roce ? "no such GID" : "InfiniBand link layer");
    return Status::ErrUnsupported;
  }
  channel_ = rdma_create_event_channel();
  if (!channel_) {
    RRT_WARN("verbs: rdma_create_event_channel: %s", strerror(errno));
    return Status::ErrUnsupported;
  }
  const int fl = fcntl(channel_->fd, F_GETFL);
  if (fl < 0 || fcntl(channel_->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
    RRT_WARN("verbs: rdma_cm channel non-blocking: %s", strerror(errno));
    return Status::ErrTransport;
  }
  if (rdma_create_id(channel_, &listen_, nullptr, RDMA_PS_TCP)) {
    RRT_WARN("verbs: rdma_create_id: %s", strerror(errno));
    return Status::ErrUnsupported;
  }
  sockaddr_storage ss;
  toSockaddr(self_, &ss);
  if (rdma_bind_addr(listen_, reinterpret_cast<sockaddr*>(&ss))) {
    RRT_WARN("verbs: rdma_bind_addr(%s): %s", endpointString(self_).c_str(), strerror(errno));
    return Status::ErrUnsupported;
  }
  if (!sameDevice(listen_)) {
    RRT_WARN("verbs: rdma_cm maps %s to %s port %u, not %s port %u",
             endpointString(self_).c_str(),
             listen_->verbs ? ibv_get_device_name(listen_->verbs->device) : "no device",
             listen_->port_num, devName_.c_str(), port_);
    return Status::ErrUnsupported;
  }
  if (rdma_listen(listen_, kBacklog)) {
    RRT_WARN("verbs: rdma_listen: %s", strerror(errno));
    return Status::ErrUnsupported;
  }
  self_.port = rdma_get_src_port(listen_);
  const int devRd = std::max(1, std::min(dev.devAttr.max_qp_rd_atom, dev.devAttr.max_qp_init_rd_atom));
  rd_ = static_cast<uint8_t>(std::min<int>(std::max<int>(1, s.qp.maxRdAtomic), devRd));
  peers_.resize(static_cast<size_t>(size_));
  RRT_INFO("verbs: rdma_cm listening on %s (%s port %u)", endpointString(self_).c_str(),
           devName_.c_str(), port_);
  return Status::Ok;
}

int RdmaCm::peerOf(const rdma_cm_id* id) const {
  if (!id || id == listen_) return -1;
  const uintptr_t v = reinterpret_cast<uintptr_t>(id->context);
  if (v == 0 || v > peers_.size()) return -1;
  const int peer = static_cast<int>(v - 1);
  return peers_[static_cast<size_t>(peer)].id == id ? peer : -1;  // else an id we dropped
}

void RdmaCm::setState(int peer, State s) {
  Peer& p = peers_[static_cast<size_t>(peer)];
  const bool was = handshaking(p.state), is = handshaking(s);
  if (!was && is) {
    ++handshakes_;
    p.deadline = core::now() + s_.setupTimeoutS;
  } else if (was && !is) {
    --handshakes_;
  }
  p.state = s;
}

namespace {

// The REQ / REP parameters: our QP, its depths and retries, and priv as private data.
rdma_conn_param connParam(const ibv_qp* qp, const CmPrivate* priv, int rd, const QpSettings& q) {
  rdma_conn_param cp{};
  cp.private_data = priv;
  cp.private_data_len = sizeof *priv;
  cp.responder_resources = static_cast<uint8_t>(rd);
  cp.initiator_depth = static_cast<uint8_t>(rd);
  cp.retry_count = q.retryCnt;
  cp.rnr_retry_count = q.rnrRetry;
  cp.srq = 1;
  cp.qp_num = qp->qp_num;
  return cp;
}

}  // namespace

void RdmaCm::dropId(rdma_cm_id* id) {
  if (id) rdma_destroy_id(id);  // every event of it was acknowledged: returns at once
}

void RdmaCm::fail(int peer, Status why, const char* what) {
  Peer& p = peers_[static_cast<size_t>(peer)];
  if (p.state == State::Failed) return;
  RRT_ERROR("verbs: rdma_cm connection to rank %d: %s", peer, what);
  setState(peer, State::Failed);
  if (p.id) dead_.push_back(p.id);
  p.id = nullptr;
  owner_->cmFailed(peer, why);
}

Status RdmaCm::connect(int peer, const CmEndpoint& ep) {
  if (peer < 0 || peer >= size_ || peer == rank_ || peers_.empty()) return Status::ErrRank;
  Peer& p = peers_[static_cast<size_t>(peer)];
  p.ep = ep;
  p.haveEp = true;
  if (p.state == State::Failed) return Status::ErrProcFailed;
  if (p.state != State::Idle) return Status::Ok;  // connected, or a handshake under way
  return startActive(peer);
}

Status RdmaCm::startActive(int peer) {
  Peer& p = peers_[static_cast<size_t>(peer)];
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel_, &id, contextOf(peer), RDMA_PS_TCP)) {
    RRT_WARN("verbs: rdma_create_id: %s", strerror(errno));
    return Status::ErrTransport;
  }
  sockaddr_storage src, dst;
  toSockaddr(self_, &src);
  reinterpret_cast<sockaddr_in*>(&src)->sin_port = 0;  // same offset in sockaddr_in6
  toSockaddr(p.ep, &dst);
  p.id = id;
  setState(peer, State::Resolving);
  RRT_DEBUG("verbs: rdma_cm connecting to rank %d at %s", peer, endpointString(p.ep).c_str());
  if (rdma_resolve_addr(id, reinterpret_cast<sockaddr*>(&src), reinterpret_cast<sockaddr*>(&dst),
                        kResolveMs)) {
    std::string what = std::string("rdma_resolve_addr: ") + strerror(errno);
    fail(peer, Status::ErrProcFailed, what.c_str());
    return Status::ErrProcFailed;
  }
  return Status::Ok;
}

int RdmaCm::poll() {
  if (!channel_) return 0;
  int n = 0;
  for (;;) {
    rdma_cm_event* ev = nullptr;
    if (rdma_get_cm_event(channel_, &ev)) {
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        RRT_WARN("verbs: rdma_get_cm_event: %s", strerror(errno));
      break;
    }
    Event e{};
    e.type = ev->event;
    e.status = ev->status;
    e.id = ev->id;
    const rdma_conn_param& c = ev->param.conn;
    if (c.private_data && c.private_data_len) {
      e.privLen = std::min<size_t>(c.private_data_len, kPrivMax);
      memcpy(e.priv, c.private_data, e.privLen);
    }
    rdma_ack_cm_event(ev);
    onEvent(e);
    ++n;
  }
  if (handshakes_ > 0) {
    const double t = core::now();
    for (size_t i = 0; i < peers_.size(); ++i)
      if (handshaking(peers_[i].state) && t > peers_[i].deadline) {
        char what[96];
        snprintf(what, sizeof what, "not established within %.0f s", s_.setupTimeoutS);
        fail(static_cast<int>(i), Status::ErrProcFailed, what);
      }
  }
  return n;
}

void RdmaCm::onEvent(const Event& e) {
  if (e.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
    onConnectRequest(e);
    return;
  }
  const int peer = peerOf(e.id);
  if (peer < 0) {
    RRT_DEBUG("verbs: rdma_cm event %s for no connection of ours", rdma_event_str(e.type));
    return;
  }
  Peer& p = peers_[static_cast<size_t>(peer)];
  switch (e.type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (p.state != State::Resolving) return;
      if (!sameDevice(e.id)) {
        fail(peer, Status::ErrUnsupported, "its address resolves to another RDMA device");
        return;
      }
      if (rdma_resolve_route(e.id, kResolveMs)) {
        std::string what = std::string("rdma_resolve_route: ") + strerror(errno);
        fail(peer, Status::ErrProcFailed, what.c_str());
        return;
      }
      setState(peer, State::Routing);
      return;
    case RDMA_CM_EVENT_ROUTE_RESOLVED: {
      if (p.state != State::Routing) return;
      ibv_qp* qp = nullptr;
      Status st = owner_->cmQp(peer, &qp);
      if (st != Status::Ok) {
        fail(peer, st, "no queue pair");
        return;
      }
      const CmPrivate priv = makeCmPrivate(CmMsg::Connect, rank_, peer, job_);
      rdma_conn_param cp = connParam(qp, &priv, rd_, s_.qp);
      if (rdma_connect(e.id, &cp)) {
        std::string what = std::string("rdma_connect: ") + strerror(errno);
        fail(peer, Status::ErrProcFailed, what.c_str());
        return;
      }
      setState(peer, State::Requested);
      return;
    }
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
      onConnectResponse(peer, e);
      return;
    case RDMA_CM_EVENT_ESTABLISHED:
      if (p.state != State::Accepted) return;
      setState(peer, State::Established);
      RRT_DEBUG("verbs: rdma_cm connection from rank %d established", peer);
      owner_->cmEstablished(peer);
      return;
    case RDMA_CM_EVENT_REJECTED:
      onRejected(peer, e);
      return;
    case RDMA_CM_EVENT_ADDR_ERROR:
    case RDMA_CM_EVENT_ROUTE_ERROR:
      // Nothing was sent to the peer yet: start over while the deadline allows.
      if ((p.state == State::Resolving || p.state == State::Routing) && core::now() < p.deadline) {
        RRT_DEBUG("verbs: rdma_cm %s for rank %d (status %d): trying again", rdma_event_str(e.type),
                  peer, e.status);
        dead_.push_back(p.id);
        p.id = nullptr;
        (void)startActive(peer);  // keeps the deadline: the state stays a handshake state
        return;
      }
      [[fallthrough]];
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_DEVICE_REMOVAL: {
      char what[96];
      snprintf(what, sizeof what, "%s (status %d)", rdma_event_str(e.type), e.status);
      fail(peer, Status::ErrProcFailed, what);
      return;
    }
    case RDMA_CM_EVENT_DISCONNECTED:
      if (p.state == State::Established || p.state == State::Accepted)
        fail(peer, Status::ErrProcFailed, "disconnected by the peer");
      return;
    default:
      return;  // TIMEWAIT_EXIT, ADDR_CHANGE, ...: nothing to do
  }
}

void RdmaCm::onConnectRequest(const Event& e) {
  int src = -1;
  const char* why = "";
  if (checkCmPrivate(e.priv, e.privLen, CmMsg::Connect, job_, size_, rank_, &src, nullptr, &why) !=
      Status::Ok) {
    RRT_WARN("verbs: rejected an rdma_cm connection from %s: %s",
             addrString(rdma_get_peer_addr(e.id)).c_str(), why);
    rdma_reject(e.id, nullptr, 0);
    dropId(e.id);
    return;
  }
  Peer& p = peers_[static_cast<size_t>(src)];
  CmReject reason = CmReject::None;
  switch (p.state) {
    case State::Idle:
    case State::AwaitIncoming:
      accept(src, e.id);
      return;
    case State::Resolving:
    case State::Routing:
    case State::Requested:
      if (src < rank_) {  // crossing: the lower rank's connection wins
        RRT_DEBUG("verbs: rdma_cm crossing with rank %d: its connection wins", src);
        dropId(p.id);
        p.id = nullptr;
        accept(src, e.id);
        return;
      }
      reason = CmReject::Crossing;
      RRT_DEBUG("verbs: rdma_cm crossing with rank %d: ours wins, its request rejected", src);
      break;
    default:  // Accepted, Established, Failed
      reason = CmReject::Duplicate;
      RRT_DEBUG("verbs: second rdma_cm connection request from rank %d rejected", src);
      break;
  }
  CmPrivate priv = makeCmPrivate(CmMsg::Reject, rank_, src, job_, reason);
  rdma_reject(e.id, &priv, sizeof priv);
  dropId(e.id);
}

Status RdmaCm::toRts(rdma_cm_id* id, ibv_qp* qp) {
  ibv_qp_attr a{};
  int mask = 0;
  a.qp_state = IBV_QPS_RTR;
  if (rdma_init_qp_attr(id, &a, &mask)) return Status::ErrTransport;
  a.min_rnr_timer = s_.qp.minRnrTimer;
  mask |= IBV_QP_MIN_RNR_TIMER;
  if (int rc = ibv_modify_qp(qp, &a, mask)) {
    RRT_WARN("verbs: QP %u to RTR (rdma_cm): %s", qp->qp_num, strerror(rc));
    return Status::ErrTransport;
  }
  a = ibv_qp_attr{};
  mask = 0;
  a.qp_state = IBV_QPS_RTS;
  if (rdma_init_qp_attr(id, &a, &mask)) return Status::ErrTransport;
  a.timeout = s_.qp.timeout;
  mask |= IBV_QP_TIMEOUT;
  if (int rc = ibv_modify_qp(qp, &a, mask)) {
    RRT_WARN("verbs: QP %u to RTS (rdma_cm): %s", qp->qp_num, strerror(rc));
    return Status::ErrTransport;
  }
  return Status::Ok;
}

void RdmaCm::accept(int peer, rdma_cm_id* id) {
  Peer& p = peers_[static_cast<size_t>(peer)];
  id->context = contextOf(peer);
  p.id = id;
  setState(peer, State::Accepted);
  ibv_qp* qp = nullptr;
  if (!sameDevice(id)) {
    rdma_reject(id, nullptr, 0);
    fail(peer, Status::ErrUnsupported, "its request arrived on another RDMA device");
    return;
  }
  Status st = owner_->cmQp(peer, &qp);
  if (st == Status::Ok) st = toRts(id, qp);
  if (st != Status::Ok) {
    rdma_reject(id, nullptr, 0);
    fail(peer, st, "cannot bring the queue pair up");
    return;
  }
  const CmPrivate priv = makeCmPrivate(CmMsg::Accept, rank_, peer, job_);
  rdma_conn_param cp = connParam(qp, &priv, rd_, s_.qp);
  if (rdma_accept(id, &cp)) {
    std::string what = std::string("rdma_accept: ") + strerror(errno);
    fail(peer, Status::ErrProcFailed, what.c_str());
    return;
  }
  RRT_DEBUG("verbs: rdma_cm connection from rank %d accepted", peer);
}

void RdmaCm::onConnectResponse(int peer, const Event& e) {
  Peer& p = peers_[static_cast<size_t>(peer)];
  if (p.state != State::Requested) return;
  int src = -1;
  const char* why = "";
  if (checkCmPrivate(e.priv, e.privLen, CmMsg::Accept, job_, size_, rank_, &src, nullptr, &why) !=
          Status::Ok ||
      src != peer) {
    std::string what = std::string("bad reply: ") + (src != peer && *why == 0 ? "another rank" : why);
    rdma_reject(e.id, nullptr, 0);
    fail(peer, Status::ErrWireup, what.c_str());
    return;
  }
  ibv_qp* qp = nullptr;
  Status st = owner_->cmQp(peer, &qp);
  if (st == Status::Ok) st = toRts(e.id, qp);
  if (st != Status::Ok) {
    rdma_reject(e.id, nullptr, 0);
    fail(peer, st, "cannot bring the queue pair up");
    return;
  }
  if (rdma_establish(e.id)) {
    std::string what = std::string("rdma_establish: ") + strerror(errno);
    fail(peer, Status::ErrProcFailed, what.c_str());
    return;
  }
  setState(peer, State::Established);
  RRT_DEBUG("verbs: rdma_cm connection to rank %d established", peer);
  owner_->cmEstablished(peer);
}

void RdmaCm::onRejected(int peer, const Event& e) {
  Peer& p = peers_[static_cast<size_t>(peer)];
  if (p.state != State::Requested) return;
  int src = -1;
  const char* why = "";
  CmReject reason = CmReject::None;
  if (checkCmPrivate(e.priv, e.privLen, CmMsg::Reject, job_, size_, rank_, &src, &reason, &why) ==
          Status::Ok &&
      src == peer && reason == CmReject::Crossing) {
    // Our request crossed the peer's (a lower rank's): its connection comes to us.
    dropId(p.id);
    p.id = nullptr;
    setState(peer, State::AwaitIncoming);
    return;
  }
  char what[96];
  snprintf(what, sizeof what, "rejected by the peer (status %d%s%s)", e.status,
           reason == CmReject::Duplicate ? ", duplicate" : "", "");
  fail(peer, Status::ErrProcFailed, what);
}

}  // namespace rrt::transport::verbs
