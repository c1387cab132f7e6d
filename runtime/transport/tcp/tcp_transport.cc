#include "runtime/transport/tcp/tcp_transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/transport/tcp/address.h"
#include "runtime/transport/tcp/frame.h"
#include "runtime/transport/tcp/interfaces.h"
#include "runtime/wireup/wireup.h"

namespace rrt::transport::tcp {
namespace {

constexpr size_t kMaxAm = size_t{64} << 10;           // header + payload of one AM
constexpr size_t kRxBytes = 4 * (kMaxAm + sizeof(FrameHeader));  // per-peer receive buffer
constexpr size_t kMaxQueuedBytes = size_t{16} << 20;   // copied bytes queued per peer
constexpr size_t kMaxZcopy = size_t{1} << 30;          // one PUT frame (len is 32-bit)
constexpr size_t kDefaultEager = size_t{32} << 10;
constexpr int kMaxEvents = 64;
constexpr int kMaxIov = 64;
constexpr size_t kMaxIncoming = 64;                    // unauthenticated sockets at once
constexpr size_t kStripeAlign = 4096;                  // stripe parts start on page boundaries
constexpr size_t kStripeOps = 256;                     // striped puts in flight per transport
constexpr uint32_t kEpollEvery = 4;  // one-peer fast path: epoll_wait on every 4th progress()
const char kFallbackSecretKey[] = "rrt.tcp.secret";  // published by rank 0 when rrun gave none
static_assert(kSecretBytes == wireup::kSecretBytes, "one secret size");

// epoll data: kind in the top 32 bits, index below (a peer's rank; for a stripe stream
// rank * kMaxStreams + stream).
enum Tag : uint64_t { kTagListen = 1, kTagPeer = 2, kTagIncoming = 3, kTagStripe = 4 };
inline uint64_t tag(Tag t, uint32_t i) { return (uint64_t{t} << 32) | i; }

enum class State : uint8_t { None, Connecting, HelloSent, AwaitIncoming, Established, Dead };

struct OutItem {
  size_t off;            // first byte in Link::txBuf
  size_t len;            // bytes in txBuf
  const uint8_t* zptr;   // PUT payload in the caller's memory, or nullptr
  size_t zlen;
  Completion* done;      // PUT: fired when the last byte is written
};

// One connection's data path: what waits to be written, and a PUT payload being read straight
// into registered memory.
struct Link {
  int fd = -1;
  uint64_t epollData = 0;
  bool wantOut = false;          // EPOLLOUT registered
  bool wantIn = true;            // EPOLLIN registered (stream 0: not while stalled)
  std::deque<OutItem> txq;
  std::vector<uint8_t> txBuf;
  size_t txDone = 0;             // bytes of txq.front() already written (txBuf part, then zptr)
  uint8_t* putDst = nullptr;     // PUT payload still to read
  size_t putLeft = 0;
};

// A stripe stream (1..streams-1) of a peer pair: PUT frames only, both ways. Opened by the rank
// whose connection became the pair's first one, right after it did.
struct Stripe {
  Link link;
  State state = State::None;     // None, Connecting, HelloSent, Established
  double deadline = 0;
  uint8_t hello[kHelloBytes];    // HelloSent: the acceptor's answer so far
  size_t helloGot = 0;
  uint8_t hdr[sizeof(PutHeader)];  // a PUT header being read
  size_t hdrGot = 0;
  uint64_t landed = 0;           // payload bytes read from this stream so far
  uint64_t expected = 0;         // payload bytes the peer's stripe marks announced on it
};

// A put cut over several streams: `done` fires once every part has been written.
class TcpTransport;
struct StripeOp;
struct StripePart : Completion {
  StripeOp* op = nullptr;
};
struct StripeOp {
  StripePart parts[kMaxStreams];
  TcpTransport* owner = nullptr;
  Completion* done = nullptr;    // nullptr: put() returned an error, nobody waits
  uint32_t left = 0;             // parts not yet written
  Status status = Status::Ok;
  StripeOp* nextFree = nullptr;
};

struct Peer {
  int rank = -1;
  State state = State::None;
  bool haveAddress = false;
  bool failReported = false;
  bool stalled = false;          // stream 0 waits at a stripe mark for stripe bytes (setStalled)
  Status why = Status::Ok;
  uint16_t portNet = 0;
  uint32_t streams = 1;          // connections of this pair: min of both ranks' RRT_TCP_STREAMS
  uint32_t stripesUp = 0;        // stripe streams established
  std::vector<Endpoint> addrs;
  size_t addrNext = 0;           // next address to try
  double deadline = 0;           // Connecting / HelloSent / AwaitIncoming; Established and
                                 // stalled: the next stripe byte is due by then
  uint8_t hello[kHelloBytes];    // HelloSent: the acceptor's answer so far
  size_t helloGot = 0;
  Link main;                     // stream 0: every AM, and puts that are not striped
  std::vector<uint8_t> rx;       // stream 0's receive buffer
  size_t rxHead = 0, rxTail = 0;
  std::vector<Stripe> stripes;   // streams 1..streams-1
  std::string route;             // "local -> remote" socket addresses, set when established
};

struct Incoming {
  int fd = -1;
  uint8_t hello[kHelloBytes];
  size_t got = 0;
  double deadline = 0;
  sockaddr_storage from{};
};

struct Region final : MemHandle {
  uint64_t cookie = 0;
};

// "ADDR:PORT" of a socket address (IPv4 or IPv6, the latter in brackets).
std::string formatSockaddr(const sockaddr_storage& sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (sa.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
    return std::string(host) + ":" + std::to_string(port);
  }
  if (sa.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&sa);
    port = ntohs(in6->sin6_port);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {  // an IPv4 peer on a dual-stack socket
      inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof host);
      return std::string(host) + ":" + std::to_string(port);
    }
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
  }
  return "[" + std::string(host) + "]:" + std::to_string(port);
}

std::string endpointString(const Endpoint& e, uint16_t portNet) {
  sockaddr_storage sa;
  toSockaddr(e, portNet, &sa);
  return formatSockaddr(sa);
}

bool constantTimeEqual(const uint8_t* a, const uint8_t* b, size_t n) {
  uint8_t d = 0;
  for (size_t i = 0; i < n; ++i) d |= a[i] ^ b[i];
  return d == 0;
}

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(const Context& ctx) : ctx_(ctx) {}
  ~TcpTransport() override;

  Status init();

  const char* name() const override { return "tcp"; }
  const Caps& caps() const override { return caps_; }
  Status address(std::vector<uint8_t>* blob) override;
  Status start() override;
  bool reachable(int peer) const override {
    return peer != ctx_.rank && peer >= 0 && peer < ctx_.size;
  }
  Status connect(int peer, const void* blob, size_t len) override;

  Status amSend(int peer, AmId id, const void* hdr, size_t hdrLen, const void* payload,
                size_t len) override;
  Status put(int peer, const void* local, size_t len, MemHandle* localMh, uint64_t remoteAddr,
             const void* rkey, size_t rkeyLen, Completion* done) override;

  Status memReg(void* addr, size_t len, MemType type, MemHandle** out) override;
  void memDereg(MemHandle* mh) override;
  size_t rkeyPack(const MemHandle* mh, void* out) const override {
    const uint64_t c = static_cast<const Region*>(mh)->cookie;
    memcpy(out, &c, sizeof c);
    return sizeof c;
  }

  int progress() override;
  bool soloQuiet(const Peer& p) const;
  bool flushed() const override {
    for (const Peer& p : peers_) {
      if (p.state == State::Dead) continue;
      if (!p.main.txq.empty()) return false;
      for (const Stripe& s : p.stripes)
        if (!s.link.txq.empty()) return false;
    }
    return true;
  }
  int eventFd() const override { return epfd_; }
  void disconnect(int peer) override {
    if (reachable(peer)) markDead(peers_[peer], Status::ErrProcFailed);
  }
  // The first connection's socket addresses, then "+K" when K stripe streams are up.
  std::string route(int peer) const override {
    if (!reachable(peer)) return std::string();
    const Peer& p = peers_[peer];
    return p.stripesUp ? p.route + "+" + std::to_string(p.stripesUp) : p.route;
  }

 private:
  // connection set-up
  Status listenOn();
  void startConnect(Peer& p);
  void onConnectEvent(Peer& p, uint32_t events);
  void onHelloReply(Peer& p);
  void onAccept();
  void onIncoming(uint32_t slot);
  void closeIncoming(uint32_t slot, const char* why);
  void establish(Peer& p, int fd, bool opener, uint32_t peerStreams);
  void fillHello(Hello* h, int peer, uint32_t stream, uint32_t verdict) const;
  bool checkHello(const Hello& h, int expectRank, const char** why) const;
  // stripe streams
  void startStripe(Peer& p, uint32_t stream);
  void onStripeConnectEvent(Peer& p, uint32_t stream, uint32_t events);
  bool adoptStripe(Peer& p, uint32_t stream, int fd);
  int readStripe(Peer& p, uint32_t stream);
  bool stripesCaughtUp(const Peer& p) const;
  Status putStriped(Peer& p, const PutHeader& h, const uint8_t* src, Completion* done);
  static void onStripePartDone(Completion* c, Status s);
  void setSocketOptions(int fd) const;
  void setEpoll(int fd, uint64_t data, uint32_t events, int op);
  void checkDeadlines();
  // data path
  bool enqueue(Link& l, const void* a, size_t alen, const void* b, size_t blen,
               const void* c, size_t clen, const uint8_t* zptr, size_t zlen, Completion* done,
               size_t skip);
  Status writeCopy(Peer& p, Link& l, const void* a, size_t alen, const void* b, size_t blen,
                   const void* c, size_t clen);
  Status writePut(Peer& p, Link& l, const PutHeader& h, const uint8_t* src, Completion* done);
  const uint8_t* putTarget(const Peer& p, const PutHeader& h, uint32_t stream);
  void flush(Peer& p, Link& l);
  void setWantOut(Link& l, bool want);
  void setInterest(Link& l);
  void setStalled(Peer& p, bool stalled);
  int readPeer(Peer& p);
  int parseFrames(Peer& p);
  // failures
  void markDead(Peer& p, Status why);
  int reportFailures();

  Context ctx_;
  Caps caps_;
  uint8_t secret_[kSecretBytes];
  bool haveSecret_ = false;
  int epfd_ = -1;
  int listenFd_ = -1;
  uint16_t portNet_ = 0;
  std::vector<Endpoint> endpoints_;
  double timeout_ = 30;
  int sockBuf_ = 0;
  bool polling_ = false;
  int stalls_ = 0;              // peers whose stream 0 is stalled at a stripe mark
  int handshakes_ = 0;          // peers and stripes in Connecting/HelloSent/AwaitIncoming +
                                // incoming sockets
  int established_ = 0;         // peers in Established
  int solo_ = -1;               // the established peer when there is exactly one
  uint32_t directCalls_ = 0;    // progress() calls on the one-peer fast path (soloRead)
  uint32_t streams_ = 1;        // RRT_TCP_STREAMS
  size_t stripeMin_ = 0;        // smallest put that is striped
  std::vector<StripeOp> stripeOps_;
  StripeOp* freeOps_ = nullptr;
  double nextDeadlineCheck_ = 0;
  std::vector<Peer> peers_;
  std::vector<Incoming> incoming_;
  std::vector<int> failed_;     // dead peers not yet reported
  std::unordered_map<uint64_t, Region*> regions_;
  std::vector<Region*> freeRegions_;
  uint64_t cookieSeed_ = 0, cookieCount_ = 0;
};

TcpTransport::~TcpTransport() {
  for (Peer& p : peers_) {
    if (p.main.fd >= 0) close(p.main.fd);
    for (Stripe& s : p.stripes)
      if (s.link.fd >= 0) close(s.link.fd);
  }
  for (Incoming& in : incoming_)
    if (in.fd >= 0) close(in.fd);
  if (listenFd_ >= 0) close(listenFd_);
  if (epfd_ >= 0) close(epfd_);
  for (auto& r : regions_) delete r.second;
  for (Region* r : freeRegions_) delete r;
}

Status TcpTransport::init() {
  if (ctx_.size < 2 || ctx_.rank < 0 || ctx_.rank >= ctx_.size || !ctx_.amHandler)
    return Status::ErrUnsupported;
  timeout_ = config::doubleOr(config::Tunable::TcpTimeout, 30);
  if (timeout_ <= 0) timeout_ = 1e9;
  sockBuf_ = static_cast<int>(
      std::min<uint64_t>(config::sizeOr(config::Tunable::TcpSockBuf, 4 << 20), 1u << 30));

  const uint64_t streams = config::sizeOr(config::Tunable::TcpStreams, 1);
  if (streams < 1 || streams > kMaxStreams) {
    RRT_ERROR("tcp: RRT_TCP_STREAMS=%s: 1 to %u connections per peer pair",
              config::value(config::Tunable::TcpStreams).c_str(), kMaxStreams);
    return Status::ErrArg;
  }
  streams_ = static_cast<uint32_t>(streams);
  stripeMin_ = std::max<uint64_t>(config::sizeOr(config::Tunable::TcpStripeMin, 1 << 20),
                                  streams_ * kStripeAlign);
  if (streams_ > 1) {  // the put bookkeeping, made once: no allocation on the fast path
    stripeOps_.resize(kStripeOps);
    for (StripeOp& op : stripeOps_) {
      op.owner = this;
      for (StripePart& part : op.parts) {
        part.op = &op;
        part.fn = &TcpTransport::onStripePartDone;
      }
      op.nextFree = freeOps_;
      freeOps_ = &op;
    }
  }

  if (ctx_.secret.size() == kSecretBytes) {
    memcpy(secret_, ctx_.secret.data(), kSecretBytes);
    haveSecret_ = true;
  } else if (ctx_.rank == 0) {
    // No secret from the launcher (e.g. Open MPI's mpirun): rank 0 makes one and hands it out
    // through PMIx, which only the job's processes can read.
    if (getrandom(secret_, kSecretBytes, 0) != static_cast<ssize_t>(kSecretBytes))
      return Status::ErrInternal;
    RRT_TRY(wireup::publish(kFallbackSecretKey, secret_, kSecretBytes));
    haveSecret_ = true;
  }
  if (getrandom(&cookieSeed_, sizeof cookieSeed_, 0) != sizeof cookieSeed_)
    return Status::ErrInternal;

  bool oneNode = true;
  for (uint32_t n : ctx_.nodeOf) oneNode &= n == ctx_.nodeOf[0];
  const std::string& spec = config::value(config::Tunable::TcpIf);
  Status st = selectEndpoints(spec, oneNode, listInterfaces(), &endpoints_);
  if (st == Status::ErrArg) RRT_ERROR("tcp: cannot parse RRT_TCP_IF=%s", spec.c_str());
  if (!ok(st)) return st;

  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return Status::ErrTransport;
  RRT_TRY(listenOn());

  peers_.resize(static_cast<size_t>(ctx_.size));
  for (int r = 0; r < ctx_.size; ++r) {
    peers_[r].rank = r;
    peers_[r].main.epollData = tag(kTagPeer, static_cast<uint32_t>(r));
  }

  const uint64_t eager = config::sizeOr(config::Tunable::TcpEagerLimit, kDefaultEager);
  caps_.flags = kAmBcopy | kPutZcopy | kOrdered | kNeedsReg | kEventFd;
  caps_.maxAm = kMaxAm;
  caps_.minZcopy = 0;
  caps_.maxZcopy = kMaxZcopy;
  caps_.zcopyMemTypes = memory::memTypeBit(MemType::Host);
  caps_.latencyUs = 10;
  caps_.bandwidthMBs = 3000;
  caps_.eagerDefault = static_cast<size_t>(eager);
  return Status::Ok;
}

// One socket for every selected address: IPv4 only, or dual-stack IPv6 (IPv4 peers arrive as
// mapped addresses) when an IPv6 address is selected.
Status TcpTransport::listenOn() {
  const bool v6 = std::any_of(endpoints_.begin(), endpoints_.end(),
                              [](const Endpoint& e) { return e.family == 6; });
  listenFd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listenFd_ < 0) return Status::ErrTransport;
  int one = 1, zero = 0;
  setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (v6) setsockopt(listenFd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  // One address: bind to it. Several: bind to all (the Hello keeps strangers out either way).
  sockaddr_storage sa{};
  socklen_t len;
  if (endpoints_.size() == 1) {
    len = toSockaddr(endpoints_[0], 0, &sa);
  } else if (v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&sa);
    in6->sin6_family = AF_INET6;
    in6->sin6_addr = in6addr_any;
    len = sizeof *in6;
  } else {
    len = toSockaddr(Endpoint::v4(htonl(INADDR_ANY), 0), 0, &sa);
  }
  if (bind(listenFd_, reinterpret_cast<sockaddr*>(&sa), len) != 0 ||
      listen(listenFd_, 256) != 0) {
    RRT_ERROR("tcp: cannot listen on %s: %s", formatSockaddr(sa).c_str(), strerror(errno));
    return Status::ErrTransport;
  }
  len = sizeof sa;
  getsockname(listenFd_, reinterpret_cast<sockaddr*>(&sa), &len);
  portNet_ = sa.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port
                                      : reinterpret_cast<sockaddr_in*>(&sa)->sin_port;
  setEpoll(listenFd_, tag(kTagListen, 0), EPOLLIN, EPOLL_CTL_ADD);
  for (const Endpoint& e : endpoints_)
    RRT_INFO("tcp: listening on %s", endpointString(e, portNet_).c_str());
  return Status::Ok;
}

Status TcpTransport::address(std::vector<uint8_t>* blob) {
  packAddress(ctx_.rank, portNet_, endpoints_, blob);
  return Status::Ok;
}

Status TcpTransport::start() {
  if (haveSecret_) return Status::Ok;
  std::vector<uint8_t> s;
  if (wireup::lookup(0, kFallbackSecretKey, &s) != Status::Ok || s.size() != kSecretBytes) {
    RRT_ERROR("tcp: no job secret (neither from the launcher nor from rank 0)");
    return Status::ErrWireup;
  }
  memcpy(secret_, s.data(), kSecretBytes);
  haveSecret_ = true;
  return Status::Ok;
}

Status TcpTransport::connect(int peer, const void* blob, size_t len) {
  if (!reachable(peer)) return Status::ErrRank;
  Peer& p = peers_[peer];
  if (!ok(parseAddress(blob, len, peer, &p.portNet, &p.addrs))) {
    RRT_WARN("tcp: malformed address blob from rank %d (%zu bytes)", peer, len);
    return Status::ErrArg;
  }
  // Addresses on one of our subnets first.
  std::stable_partition(p.addrs.begin(), p.addrs.end(), [this](const Endpoint& e) {
    return std::any_of(endpoints_.begin(), endpoints_.end(),
                       [&](const Endpoint& m) { return sameSubnet(e, m); });
  });
  p.haveAddress = true;
  return Status::Ok;
}

void TcpTransport::setSocketOptions(int fd) const {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (sockBuf_ > 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sockBuf_, sizeof sockBuf_);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sockBuf_, sizeof sockBuf_);
  }
  // A peer whose host vanished: unacknowledged data or a silent link fail within ~timeout.
  const unsigned userTimeoutMs = static_cast<unsigned>(std::min(timeout_, 1e6) * 1000);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &userTimeoutMs, sizeof userTimeoutMs);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  int idle = std::max(1, static_cast<int>(std::min(timeout_, 1e6) / 3));
  int cnt = 3;
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
}

void TcpTransport::setEpoll(int fd, uint64_t data, uint32_t events, int op) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = data;
  if (epoll_ctl(epfd_, op, fd, &ev) != 0)
    RRT_WARN("tcp: epoll_ctl(%d) on fd %d: %s", op, fd, strerror(errno));
}

void TcpTransport::fillHello(Hello* h, int peer, uint32_t stream, uint32_t verdict) const {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, kHelloMagic, sizeof h->magic);
  memcpy(h->secret, secret_, kSecretBytes);
  h->rank = ctx_.rank;
  h->peer = peer;
  h->size = static_cast<uint32_t>(ctx_.size);
  h->verdict = verdict;
  h->stream = stream;
  h->streams = static_cast<uint16_t>(streams_);
}

bool TcpTransport::checkHello(const Hello& h, int expectRank, const char** why) const {
  if (memcmp(h.magic, kHelloMagic, sizeof h.magic) != 0) {
    *why = "not an rrt connection";
  } else if (!constantTimeEqual(h.secret, secret_, kSecretBytes)) {
    *why = "wrong job secret";
  } else if (h.size != static_cast<uint32_t>(ctx_.size) || h.peer != ctx_.rank ||
             h.rank < 0 || h.rank >= ctx_.size || h.rank == ctx_.rank ||
             (expectRank >= 0 && h.rank != expectRank)) {
    *why = "impossible ranks";
  } else if (h.stream >= kMaxStreams || h.streams == 0 || h.streams > kMaxStreams) {
    *why = "impossible stream";
  } else {
    return true;
  }
  return false;
}

// ---- connecting -----------------------------------------------------------------------------

void TcpTransport::startConnect(Peer& p) {
  while (p.addrNext < p.addrs.size()) {
    const Endpoint& e = p.addrs[p.addrNext++];
    sockaddr_storage sa;
    const socklen_t len = toSockaddr(e, p.portNet, &sa);
    int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;  // e.g. IPv6 off on this host: try the next address
    setSocketOptions(fd);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 && errno != EINPROGRESS) {
      RRT_INFO("tcp: connect to rank %d at %s: %s", p.rank, endpointString(e, p.portNet).c_str(),
               strerror(errno));
      close(fd);
      continue;
    }
    RRT_DEBUG("tcp: connecting to rank %d at %s", p.rank, endpointString(e, p.portNet).c_str());
    if (p.state == State::None) ++handshakes_;
    p.main.fd = fd;
    p.state = State::Connecting;
    p.helloGot = 0;
    p.deadline = core::now() + timeout_;
    setEpoll(fd, tag(kTagPeer, p.rank), EPOLLOUT, EPOLL_CTL_ADD);
    return;
  }
  RRT_ERROR("tcp: cannot connect to rank %d on any of its %zu addresses", p.rank, p.addrs.size());
  markDead(p, Status::ErrProcFailed);
}

void TcpTransport::onConnectEvent(Peer& p, uint32_t events) {
  if (p.state == State::Connecting) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(p.main.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
      RRT_INFO("tcp: connect to rank %d failed: %s", p.rank, strerror(err ? err : ECONNREFUSED));
      close(p.main.fd);
      p.main.fd = -1;
      startConnect(p);  // the next address, or dead
      return;
    }
    Hello h;
    fillHello(&h, p.rank, 0, kVerdictNone);
    // A fresh socket's send buffer takes 64 bytes whole.
    if (send(p.main.fd, &h, sizeof h, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof h)) {
      markDead(p, Status::ErrProcFailed);
      return;
    }
    p.state = State::HelloSent;
    setEpoll(p.main.fd, tag(kTagPeer, p.rank), EPOLLIN, EPOLL_CTL_MOD);
    return;
  }
  onHelloReply(p);
}

void TcpTransport::onHelloReply(Peer& p) {
  ssize_t n = recv(p.main.fd, p.hello + p.helloGot, kHelloBytes - p.helloGot, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    RRT_WARN("tcp: rank %d closed the connection during the handshake", p.rank);
    markDead(p, Status::ErrProcFailed);
    return;
  }
  p.helloGot += static_cast<size_t>(n);
  if (p.helloGot < kHelloBytes) return;
  Hello h;
  memcpy(&h, p.hello, sizeof h);
  const char* why = nullptr;
  if (!checkHello(h, p.rank, &why) || (h.stream != 0 && (why = "wrong stream"))) {
    RRT_ERROR("tcp: the listener of rank %d failed authentication (%s)", p.rank, why);
    markDead(p, Status::ErrTransport);
    return;
  }
  if (h.verdict == kVerdictAccept) {
    --handshakes_;
    int fd = p.main.fd;
    establish(p, fd, true, h.streams);
    return;
  }
  // Rejected: the peer (lower rank) is connecting to us; its connection will arrive.
  close(p.main.fd);
  p.main.fd = -1;
  p.state = State::AwaitIncoming;
  p.deadline = core::now() + timeout_;
  RRT_DEBUG("tcp: rank %d connects to us instead", p.rank);
}

namespace {

std::string connectionRoute(int fd) {
  sockaddr_storage local{}, remote{};
  socklen_t llen = sizeof local, rlen = sizeof remote;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &llen) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &rlen) != 0)
    return std::string();
  return formatSockaddr(local) + "->" + formatSockaddr(remote);
}

}  // namespace

// peerStreams: what the peer's Hello asked for; the pair runs the smaller of it and ours.
void TcpTransport::establish(Peer& p, int fd, bool opener, uint32_t peerStreams) {
  p.streams = std::min(streams_, peerStreams);
  p.stripes.clear();
  p.stripes.resize(p.streams - 1);
  for (uint32_t k = 1; k < p.streams; ++k)
    p.stripes[k - 1].link.epollData =
        tag(kTagStripe, static_cast<uint32_t>(p.rank) * kMaxStreams + k);
  p.main.fd = fd;
  p.route = connectionRoute(fd);
  p.state = State::Established;
  solo_ = ++established_ == 1 ? p.rank : -1;
  p.rx.resize(kRxBytes);
  p.rxHead = p.rxTail = 0;
  p.main.wantOut = false;
  setEpoll(fd, p.main.epollData, EPOLLIN, EPOLL_CTL_MOD);
  RRT_DEBUG("tcp: connected with rank %d", p.rank);
  // The rank whose connection survived opens the stripe streams, so they never race.
  if (opener)
    for (uint32_t k = 1; k < p.streams && p.state == State::Established; ++k) startStripe(p, k);
  if (p.state == State::Established) flush(p, p.main);
}

void TcpTransport::onAccept() {
  for (;;) {
    sockaddr_storage from{};
    socklen_t len = sizeof from;
    int fd = accept4(listenFd_, reinterpret_cast<sockaddr*>(&from), &len,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    size_t slot = 0;
    while (slot < incoming_.size() && incoming_[slot].fd >= 0) ++slot;
    if (slot == kMaxIncoming) {
      RRT_WARN("tcp: too many unauthenticated connections; closing one from %s",
               formatSockaddr(from).c_str());
      close(fd);
      continue;
    }
    if (slot == incoming_.size()) incoming_.emplace_back();
    Incoming& in = incoming_[slot];
    in.fd = fd;
    in.got = 0;
    in.from = from;
    in.deadline = core::now() + timeout_;
    ++handshakes_;
    RRT_DEBUG("tcp: accepted a connection from %s",
              formatSockaddr(from).c_str());
    setSocketOptions(fd);
    setEpoll(fd, tag(kTagIncoming, static_cast<uint32_t>(slot)), EPOLLIN, EPOLL_CTL_ADD);
  }
}

void TcpTransport::closeIncoming(uint32_t slot, const char* why) {
  Incoming& in = incoming_[slot];
  if (why)
    RRT_WARN("tcp: rejected a connection from %s: %s",
             formatSockaddr(in.from).c_str(), why);
  else
    RRT_DEBUG("tcp: closed a connection from %s (connect race)",
              formatSockaddr(in.from).c_str());
  close(in.fd);
  in.fd = -1;
  --handshakes_;
}

void TcpTransport::onIncoming(uint32_t slot) {
  Incoming& in = incoming_[slot];
  ssize_t n = recv(in.fd, in.hello + in.got, kHelloBytes - in.got, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    // A connector that dropped its own attempt (connect race) closes without a word.
    closeIncoming(slot, in.got ? "closed during the handshake" : nullptr);
    return;
  }
  in.got += static_cast<size_t>(n);
  if (in.got < kHelloBytes) return;
  Hello h;
  memcpy(&h, in.hello, sizeof h);
  const char* why = nullptr;
  if (!haveSecret_ || !checkHello(h, -1, &why)) {
    closeIncoming(slot, why ? why : "no secret yet");
    return;
  }
  Peer& p = peers_[h.rank];
  if (h.stream != 0) {  // a stripe stream of an established pair, or nothing
    const int fd = in.fd;
    in.fd = -1;
    --handshakes_;
    if (!adoptStripe(p, h.stream, fd)) {
      RRT_WARN("tcp: rejected stripe stream %u from rank %d (not expected)", h.stream, h.rank);
      close(fd);
    }
    return;
  }
  bool accept;
  switch (p.state) {
    case State::None:
    case State::AwaitIncoming: accept = true; break;
    case State::Connecting:
    case State::HelloSent: accept = h.rank < ctx_.rank; break;  // the lower rank's wins
    default: accept = false;  // established or dead: a second connection is not wanted
  }
  Hello reply;
  fillHello(&reply, h.rank, 0, accept ? kVerdictAccept : kVerdictReject);
  const bool sent = send(in.fd, &reply, sizeof reply, MSG_NOSIGNAL) ==
                    static_cast<ssize_t>(sizeof reply);
  if (!accept || !sent) {
    closeIncoming(slot, nullptr);
    return;
  }
  // Adopt the socket for this peer; our own attempt (if any) carried no data and goes.
  const int fd = in.fd;
  in.fd = -1;
  --handshakes_;
  if (p.state == State::Connecting || p.state == State::HelloSent) {
    close(p.main.fd);
    p.main.fd = -1;
  }
  if (p.state != State::None) --handshakes_;  // Connecting/HelloSent/AwaitIncoming end here
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  setEpoll(fd, p.main.epollData, EPOLLIN, EPOLL_CTL_ADD);
  establish(p, fd, false, h.streams);
}

void TcpTransport::checkDeadlines() {
  const double t = core::now();
  if (t < nextDeadlineCheck_) return;
  nextDeadlineCheck_ = t + 0.1;
  for (uint32_t i = 0; i < incoming_.size(); ++i)
    if (incoming_[i].fd >= 0 && t > incoming_[i].deadline)
      closeIncoming(i, "no handshake within RRT_TCP_TIMEOUT");
  for (Peer& p : peers_) {
    if ((p.state == State::Connecting || p.state == State::HelloSent ||
         p.state == State::AwaitIncoming) && t > p.deadline) {
      RRT_ERROR("tcp: no connection with rank %d within %.0f s (RRT_TCP_TIMEOUT)", p.rank,
                timeout_);
      markDead(p, Status::ErrProcFailed);
    }
    if (p.stalled && t > p.deadline) {
      RRT_ERROR("tcp: rank %d announced data on its stripe streams and sent no byte of it for "
                "%.0f s (RRT_TCP_TIMEOUT)", p.rank, timeout_);
      markDead(p, Status::ErrProcFailed);
    }
    for (size_t k = 0; k < p.stripes.size() && p.state == State::Established; ++k) {
      const Stripe& s = p.stripes[k];
      if ((s.state == State::Connecting || s.state == State::HelloSent) && t > s.deadline) {
        RRT_ERROR("tcp: stripe stream %zu to rank %d not set up within %.0f s (RRT_TCP_TIMEOUT)",
                  k + 1, p.rank, timeout_);
        markDead(p, Status::ErrProcFailed);
      }
    }
  }
}

// ---- stripe streams -------------------------------------------------------------------------
// Extra connections of an established pair (RRT_TCP_STREAMS > 1), opened by the rank whose
// connection became the first one, to the address that connection reached, with the same
// Hello (its `stream` says which). The acceptor takes stream k only from a peer it is
// established with and only once. Any failure of a stripe stream (set-up included) fails the
// peer: its data may be half-written.

void TcpTransport::startStripe(Peer& p, uint32_t stream) {
  Stripe& s = p.stripes[stream - 1];
  const Endpoint& e = p.addrs[p.addrNext - 1];  // the address the first connection reached
  sockaddr_storage sa;
  const socklen_t len = toSockaddr(e, p.portNet, &sa);
  const int fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || (::connect(fd, reinterpret_cast<sockaddr*>(&sa), len) != 0 &&
                 errno != EINPROGRESS)) {
    RRT_ERROR("tcp: stripe stream %u to rank %d at %s: %s", stream, p.rank,
              endpointString(e, p.portNet).c_str(), strerror(errno));
    if (fd >= 0) close(fd);
    markDead(p, Status::ErrProcFailed);
    return;
  }
  setSocketOptions(fd);
  s.link.fd = fd;
  s.state = State::Connecting;
  s.helloGot = 0;
  s.deadline = core::now() + timeout_;
  ++handshakes_;
  setEpoll(fd, s.link.epollData, EPOLLOUT, EPOLL_CTL_ADD);
}

void TcpTransport::onStripeConnectEvent(Peer& p, uint32_t stream, uint32_t events) {
  Stripe& s = p.stripes[stream - 1];
  if (s.state == State::Connecting) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(s.link.fd, SOL_SOCKET, SO_ERROR, &err, &len);
    Hello h;
    fillHello(&h, p.rank, stream, kVerdictNone);
    if (err != 0 || (events & (EPOLLERR | EPOLLHUP)) ||
        send(s.link.fd, &h, sizeof h, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof h)) {
      RRT_ERROR("tcp: stripe stream %u to rank %d: %s", stream, p.rank,
                strerror(err ? err : ECONNREFUSED));
      markDead(p, Status::ErrProcFailed);
      return;
    }
    s.state = State::HelloSent;
    setEpoll(s.link.fd, s.link.epollData, EPOLLIN, EPOLL_CTL_MOD);
    return;
  }
  const ssize_t n = recv(s.link.fd, s.hello + s.helloGot, kHelloBytes - s.helloGot, 0);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    RRT_ERROR("tcp: rank %d closed stripe stream %u during the handshake", p.rank, stream);
    markDead(p, Status::ErrProcFailed);
    return;
  }
  s.helloGot += static_cast<size_t>(n);
  if (s.helloGot < kHelloBytes) return;
  Hello h;
  memcpy(&h, s.hello, sizeof h);
  const char* why = nullptr;
  if (!checkHello(h, p.rank, &why) || (h.stream != stream && (why = "wrong stream")) ||
      (h.verdict != kVerdictAccept && (why = "refused"))) {
    RRT_ERROR("tcp: stripe stream %u to rank %d failed its handshake (%s)", stream, p.rank, why);
    markDead(p, Status::ErrTransport);
    return;
  }
  --handshakes_;
  s.state = State::Established;
  ++p.stripesUp;
  RRT_DEBUG("tcp: stripe stream %u with rank %d up", stream, p.rank);
  flush(p, s.link);
}

// Acceptor side: a stripe stream whose Hello passed checkHello.
bool TcpTransport::adoptStripe(Peer& p, uint32_t stream, int fd) {
  if (p.state != State::Established || stream >= p.streams ||
      p.stripes[stream - 1].state != State::None)
    return false;
  Hello reply;
  fillHello(&reply, p.rank, stream, kVerdictAccept);
  if (send(fd, &reply, sizeof reply, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof reply))
    return false;
  Stripe& s = p.stripes[stream - 1];
  s.link.fd = fd;
  s.state = State::Established;
  ++p.stripesUp;
  setEpoll(fd, s.link.epollData, EPOLLIN, EPOLL_CTL_MOD);
  RRT_DEBUG("tcp: stripe stream %u with rank %d up", stream, p.rank);
  return true;
}

bool TcpTransport::stripesCaughtUp(const Peer& p) const {
  for (const Stripe& s : p.stripes)
    if (s.landed < s.expected) return false;
  return true;
}

// Reads PUT frames from a stripe stream straight into registered memory; when stream 0 waits at
// a stripe mark that is now satisfied, parses on there.
int TcpTransport::readStripe(Peer& p, uint32_t stream) {
  Stripe& s = p.stripes[stream - 1];
  Link& l = s.link;
  int events = 0;
  bool moved = false;  // payload bytes landed (a stall's deadline moves on)
  while (p.state == State::Established) {
    size_t asked;
    ssize_t n;
    if (l.putLeft) {
      asked = l.putLeft;
      n = recv(l.fd, l.putDst, asked, MSG_DONTWAIT);
      if (n > 0) {
        l.putDst += n;
        l.putLeft -= static_cast<size_t>(n);
        s.landed += static_cast<size_t>(n);
        moved = true;
      }
    } else {
      asked = sizeof s.hdr - s.hdrGot;
      n = recv(l.fd, s.hdr + s.hdrGot, asked, MSG_DONTWAIT);
      if (n > 0) s.hdrGot += static_cast<size_t>(n);
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      RRT_ERROR("tcp: stripe stream %u from rank %d: %s", stream, p.rank, strerror(errno));
      markDead(p, Status::ErrProcFailed);
      break;
    }
    if (n == 0) {
      RRT_ERROR("tcp: rank %d closed stripe stream %u", p.rank, stream);
      markDead(p, Status::ErrProcFailed);
      break;
    }
    if (s.hdrGot == sizeof s.hdr) {
      s.hdrGot = 0;
      PutHeader h;
      memcpy(&h, s.hdr, sizeof h);
      const uint8_t* dst = h.f.kind == kPut ? putTarget(p, h, stream) : nullptr;
      if (!dst || h.f.len == 0) {
        if (h.f.kind != kPut)
          RRT_ERROR("tcp: rank %d sent a frame of kind %u on stripe stream %u; dropping it",
                    p.rank, h.f.kind, stream);
        else if (dst)  // a striped put never sends an empty part
          RRT_ERROR("tcp: rank %d sent an empty put on stripe stream %u; dropping it", p.rank,
                    stream);
        markDead(p, Status::ErrTransport);
        break;
      }
      l.putDst = const_cast<uint8_t*>(dst);
      l.putLeft = h.f.len;
      ++events;
    }
    if (static_cast<size_t>(n) < asked) break;  // drained
  }
  if (p.stalled && p.state == State::Established) {
    if (stripesCaughtUp(p)) {
      setStalled(p, false);
      events += parseFrames(p);
    } else if (moved) {
      p.deadline = core::now() + timeout_;
    }
  }
  return events;
}

// The parts of a striped put are written: the op fires the caller's completion with the first
// failure of any part, then goes back to the free list.
void TcpTransport::onStripePartDone(Completion* c, Status st) {
  StripeOp* op = static_cast<StripePart*>(c)->op;
  if (failed(st) && op->status == Status::Ok) op->status = st;
  if (--op->left > 0) return;
  TcpTransport* self = op->owner;
  if (op->done) op->done->fn(op->done, op->status);
  op->nextFree = self->freeOps_;
  self->freeOps_ = op;
}

// Cuts a put over stream 0 and every stripe stream in page-aligned parts; stream 0 carries its
// part and then the mark that tells the receiver how many bytes each stripe stream brings.
Status TcpTransport::putStriped(Peer& p, const PutHeader& h, const uint8_t* src,
                                Completion* done) {
  StripeOp* op = freeOps_;
  freeOps_ = op->nextFree;
  op->done = done;
  op->status = Status::Ok;
  op->left = 0;  // parts in flight (none completes before this returns: only progress does)
  const size_t len = h.f.len;
  const size_t perStream = (len + p.streams - 1) / p.streams;
  const size_t share = (perStream + kStripeAlign - 1) / kStripeAlign * kStripeAlign;
  StripeMark mark{};
  mark.f.len = sizeof mark - sizeof mark.f;
  mark.f.kind = kStripeMark;
  Status st = Status::Ok;
  for (uint32_t k = 0; k < p.streams && !failed(st); ++k) {
    const size_t off = k * share;
    if (off >= len) break;
    PutHeader part = h;
    part.f.len = static_cast<uint32_t>(std::min(share, len - off));
    part.addr = h.addr + off;
    Link& l = k == 0 ? p.main : p.stripes[k - 1].link;
    st = writePut(p, l, part, src + off, &op->parts[k]);
    if (st == Status::InProgress) ++op->left;
    if (k > 0) mark.bytes[k - 1] = part.f.len;
  }
  if (!failed(st)) st = writeCopy(p, p.main, &mark, sizeof mark, nullptr, 0, nullptr, 0);
  if (failed(st)) op->done = nullptr;  // the caller hears the error now, never later
  if (op->left == 0) {                 // all written already (or failed): nothing will fire
    op->nextFree = freeOps_;
    freeOps_ = op;
    return failed(st) ? st : Status::Ok;
  }
  return failed(st) ? st : Status::InProgress;
}

// ---- data path ------------------------------------------------------------------------------

// Copies a|b|c (skipping the first `skip` bytes of the three) into the link's queue as one
// item; zptr/zlen (user memory) follow it. False when the queue is full.
bool TcpTransport::enqueue(Link& l, const void* a, size_t alen, const void* b, size_t blen,
                           const void* c, size_t clen, const uint8_t* zptr, size_t zlen,
                           Completion* done, size_t skip) {
  const size_t total = alen + blen + clen;
  const size_t copy = total > skip ? total - skip : 0;
  if (!zptr && l.txBuf.size() + copy > kMaxQueuedBytes && !l.txq.empty()) return false;
  OutItem it{l.txBuf.size(), copy, zptr, zlen, done};
  const void* parts[3] = {a, b, c};
  const size_t lens[3] = {alen, blen, clen};
  for (int i = 0; i < 3; ++i) {
    size_t n = lens[i];
    const uint8_t* s = static_cast<const uint8_t*>(parts[i]);
    if (skip >= n) {
      skip -= n;
      continue;
    }
    s += skip;
    n -= skip;
    skip = 0;
    l.txBuf.insert(l.txBuf.end(), s, s + n);
  }
  l.txq.push_back(it);
  return true;
}

// Writes a|b|c on an established link, or queues (a copy of) what the kernel did not take.
// Ok, NoResource (the queue is full: nothing done) or ErrProcFailed.
Status TcpTransport::writeCopy(Peer& p, Link& l, const void* a, size_t alen, const void* b,
                               size_t blen, const void* c, size_t clen) {
  ssize_t n = 0;
  if (__builtin_expect(l.txq.empty(), 1)) {
    iovec iov[3] = {{const_cast<void*>(a), alen},
                    {const_cast<void*>(b), blen},
                    {const_cast<void*>(c), clen}};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = clen ? 3 : blen ? 2 : 1;
    n = sendmsg(l.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (__builtin_expect(n == static_cast<ssize_t>(alen + blen + clen), 1)) return Status::Ok;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      RRT_WARN("tcp: send to rank %d: %s", p.rank, strerror(errno));
      markDead(p, Status::ErrProcFailed);
      return Status::ErrProcFailed;
    }
  }
  if (!enqueue(l, a, alen, b, blen, c, clen, nullptr, 0, nullptr,
               n > 0 ? static_cast<size_t>(n) : 0))
    return Status::NoResource;
  setWantOut(l, true);
  return Status::Ok;
}

// A PUT frame on an established link, its payload straight from src: Ok when the kernel took it
// all, InProgress when the rest is queued (done fires from flush), or ErrProcFailed.
Status TcpTransport::writePut(Peer& p, Link& l, const PutHeader& h, const uint8_t* src,
                              Completion* done) {
  const size_t len = h.f.len;
  size_t sent = 0;
  if (l.txq.empty()) {
    iovec iov[2] = {{const_cast<PutHeader*>(&h), sizeof h}, {const_cast<uint8_t*>(src), len}};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = 2;
    const ssize_t n = sendmsg(l.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n == static_cast<ssize_t>(sizeof h + len)) return Status::Ok;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      RRT_WARN("tcp: send to rank %d: %s", p.rank, strerror(errno));
      markDead(p, Status::ErrProcFailed);
      return Status::ErrProcFailed;
    }
    sent = n > 0 ? static_cast<size_t>(n) : 0;
  }
  if (sent >= sizeof h) {
    enqueue(l, nullptr, 0, nullptr, 0, nullptr, 0, src + (sent - sizeof h),
            len - (sent - sizeof h), done, 0);
  } else {
    enqueue(l, &h, sizeof h, nullptr, 0, nullptr, 0, src, len, done, sent);
  }
  setWantOut(l, true);
  return Status::InProgress;
}

Status TcpTransport::amSend(int peer, AmId id, const void* hdr, size_t hdrLen,
                            const void* payload, size_t len) {
  if (__builtin_expect(static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size) ||
                           peer == ctx_.rank, 0))
    return Status::ErrRank;
  if (__builtin_expect(hdrLen + len > kMaxAm, 0)) return Status::ErrArg;
  Peer& p = peers_[peer];
  FrameHeader f{static_cast<uint32_t>(hdrLen + len), kAm, id, 0};
  if (__builtin_expect(p.state == State::Established, 1))
    return writeCopy(p, p.main, &f, sizeof f, hdr, hdrLen, payload, len);
  if (p.state == State::Dead) return Status::ErrProcFailed;
  if (!p.haveAddress) return Status::ErrArg;
  if (!enqueue(p.main, &f, sizeof f, hdr, hdrLen, payload, len, nullptr, 0, nullptr, 0))
    return Status::NoResource;
  if (p.state == State::None) startConnect(p);
  return p.state == State::Dead ? Status::ErrProcFailed : Status::Ok;
}

Status TcpTransport::put(int peer, const void* local, size_t len, MemHandle* localMh,
                         uint64_t remoteAddr, const void* rkey, size_t rkeyLen,
                         Completion* done) {
  if (static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size) || peer == ctx_.rank)
    return Status::ErrRank;
  if (rkeyLen != sizeof(uint64_t) || len > kMaxZcopy) return Status::ErrArg;
  if (len == 0) return Status::Ok;
  Peer& p = peers_[peer];
  PutHeader h{};
  h.f.len = static_cast<uint32_t>(len);
  h.f.kind = kPut;
  h.addr = remoteAddr;
  memcpy(&h.cookie, rkey, sizeof h.cookie);
  const uint8_t* src = static_cast<const uint8_t*>(local);
  if (p.state == State::Established) {
    // Striped once every stripe stream is up; until then (and when no op is free) on stream 0.
    // The mark always fits the queue of stream 0.
    if (len >= stripeMin_ && p.streams > 1 && p.stripesUp + 1 == p.streams && freeOps_ &&
        p.main.txBuf.size() + sizeof(StripeMark) <= kMaxQueuedBytes)
      return putStriped(p, h, src, done);
    return writePut(p, p.main, h, src, done);
  }
  if (p.state == State::Dead) return Status::ErrProcFailed;
  if (!p.haveAddress) return Status::ErrArg;
  enqueue(p.main, &h, sizeof h, nullptr, 0, nullptr, 0, src, len, done, 0);
  if (p.state == State::None) startConnect(p);
  if (p.state == State::Dead) {
    p.main.txq.clear();  // markDead already ran; the completion must not fire too
    p.main.txBuf.clear();
    return Status::ErrProcFailed;
  }
  return Status::InProgress;
}

void TcpTransport::setWantOut(Link& l, bool want) {
  if (l.wantOut == want || l.fd < 0) return;
  l.wantOut = want;
  setInterest(l);
}

void TcpTransport::setInterest(Link& l) {
  setEpoll(l.fd, l.epollData, (l.wantIn ? EPOLLIN : 0u) | (l.wantOut ? EPOLLOUT : 0u),
           EPOLL_CTL_MOD);
}

// While stream 0 waits at a stripe mark its socket is left unread; with EPOLLIN registered it
// would keep the epoll fd readable and the rank from ever sleeping. So EPOLLIN goes away until
// the stripes caught up, and the stall gets RRT_TCP_TIMEOUT per stripe byte (checkDeadlines): a
// peer whose stripes stay silent fails instead of stalling stream 0 for good.
void TcpTransport::setStalled(Peer& p, bool stalled) {
  if (p.stalled == stalled) return;
  p.stalled = stalled;
  stalls_ += stalled ? 1 : -1;
  if (stalled) p.deadline = core::now() + timeout_;
  p.main.wantIn = !stalled;
  if (p.main.fd >= 0) setInterest(p.main);
}

void TcpTransport::flush(Peer& p, Link& l) {
  while (p.state == State::Established && !l.txq.empty()) {
    iovec iov[kMaxIov];
    int n = 0;
    size_t skip = l.txDone;
    for (const OutItem& it : l.txq) {
      if (n + 2 > kMaxIov) break;
      if (skip < it.len) {
        iov[n++] = {l.txBuf.data() + it.off + skip, it.len - skip};
        skip = 0;
      } else {
        skip -= it.len;
      }
      if (it.zptr && skip < it.zlen) {
        iov[n++] = {const_cast<uint8_t*>(it.zptr) + skip, it.zlen - skip};
        skip = 0;
      } else if (it.zptr) {
        skip -= it.zlen;
      }
    }
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<size_t>(n);
    const ssize_t w = sendmsg(l.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
      RRT_WARN("tcp: send to rank %d: %s", p.rank, strerror(errno));
      markDead(p, Status::ErrProcFailed);
      return;
    }
    size_t left = static_cast<size_t>(w) + l.txDone;
    l.txDone = 0;
    while (!l.txq.empty()) {
      const OutItem it = l.txq.front();
      const size_t whole = it.len + (it.zptr ? it.zlen : 0);
      if (left < whole) {
        l.txDone = left;
        break;
      }
      left -= whole;
      l.txq.pop_front();
      if (it.done) it.done->fn(it.done, Status::Ok);  // may queue more (e.g. the FIN)
      if (p.state != State::Established) return;
    }
  }
  if (l.txq.empty()) {
    l.txBuf.clear();
    l.txDone = 0;
  }
  setWantOut(l, !l.txq.empty());
}

int TcpTransport::readPeer(Peer& p) {
  int events = 0;
  // Stalled at a stripe mark: what follows stays in the kernel until the stripes caught up.
  while (p.state == State::Established && !p.stalled) {
    ssize_t n;
    size_t asked;
    if (p.rxHead == p.rxTail) p.rxHead = p.rxTail = 0;
    if (p.main.putLeft) {
      iovec iov[2] = {{p.main.putDst, p.main.putLeft},
                      {p.rx.data() + p.rxTail, p.rx.size() - p.rxTail}};
      asked = iov[0].iov_len + iov[1].iov_len;
      n = readv(p.main.fd, iov, iov[1].iov_len ? 2 : 1);
      if (n > 0) {
        const size_t take = std::min(static_cast<size_t>(n), p.main.putLeft);
        p.main.putDst += take;
        p.main.putLeft -= take;
        p.rxTail += static_cast<size_t>(n) - take;
      }
    } else {
      asked = p.rx.size() - p.rxTail;
      n = recv(p.main.fd, p.rx.data() + p.rxTail, asked, MSG_DONTWAIT);
      if (n > 0) p.rxTail += static_cast<size_t>(n);
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      RRT_WARN("tcp: receive from rank %d: %s", p.rank, strerror(errno));
      markDead(p, Status::ErrProcFailed);
      break;
    }
    if (n == 0) {
      RRT_WARN("tcp: rank %d closed its connection", p.rank);
      markDead(p, Status::ErrProcFailed);
      break;
    }
    events += parseFrames(p);
    if (static_cast<size_t>(n) < asked) break;  // drained
  }
  return events;
}

// Where a PUT frame's payload goes: inside a region registered under its cookie, else nullptr
// (logged; the caller drops the peer).
const uint8_t* TcpTransport::putTarget(const Peer& p, const PutHeader& h, uint32_t stream) {
  auto it = regions_.find(h.cookie);
  const Region* r = it == regions_.end() ? nullptr : it->second;
  const uint64_t base = r ? reinterpret_cast<uint64_t>(r->addr) : 0;
  if (!r || h.addr < base || h.f.len > r->length || h.addr - base > r->length - h.f.len) {
    RRT_ERROR("tcp: rank %d put %u bytes outside any registered region (stream %u); dropping "
              "the connection", p.rank, h.f.len, stream);
    return nullptr;
  }
  return reinterpret_cast<const uint8_t*>(h.addr);
}

// Delivers every complete AM in the receive buffer and starts a PUT whose header is there;
// stops at a stripe mark until the stripe streams brought what it announced.
int TcpTransport::parseFrames(Peer& p) {
  int events = 0;
  while (p.state == State::Established && p.main.putLeft == 0 && !p.stalled) {
    const size_t avail = p.rxTail - p.rxHead;
    if (avail < sizeof(FrameHeader)) break;
    FrameHeader f;
    memcpy(&f, p.rx.data() + p.rxHead, sizeof f);
    if (f.kind == kAm) {
      if (f.len > kMaxAm) {
        RRT_ERROR("tcp: rank %d sent a %u-byte active message; dropping the connection",
                  p.rank, f.len);
        markDead(p, Status::ErrTransport);
        break;
      }
      if (avail < sizeof f + f.len) break;
      const uint8_t* d = p.rx.data() + p.rxHead + sizeof f;
      p.rxHead += sizeof f + f.len;
      ctx_.amHandler(ctx_.handlerArg, p.rank, f.amId, d, f.len);
      ++events;
      continue;
    }
    if (f.kind == kStripeMark) {
      StripeMark m;
      if (f.len != sizeof m - sizeof f) {
        RRT_ERROR("tcp: rank %d sent a malformed stripe mark; dropping the connection", p.rank);
        markDead(p, Status::ErrTransport);
        break;
      }
      if (avail < sizeof m) break;
      memcpy(&m, p.rx.data() + p.rxHead, sizeof m);
      // Bytes may only be announced on a stripe stream that was opened: a peer stripes a put
      // only once its stripes are up, and ours are then at least connecting. A mark naming one
      // never opened (state None: we accept stripes and the peer never opened it) would stall
      // stream 0 for good, and with it the hang-up of a peer that is gone.
      bool fits = true;
      for (uint32_t k = 1; k < kMaxStreams; ++k)
        fits &= m.bytes[k - 1] == 0 || (k < p.streams && p.stripes[k - 1].state != State::None);
      if (!fits) {
        RRT_ERROR("tcp: rank %d announced data on stripe streams it has not opened; dropping "
                  "the connection", p.rank);
        markDead(p, Status::ErrTransport);
        break;
      }
      p.rxHead += sizeof m;
      for (uint32_t k = 1; k < p.streams; ++k) p.stripes[k - 1].expected += m.bytes[k - 1];
      if (!stripesCaughtUp(p)) setStalled(p, true);
      continue;
    }
    if (f.kind != kPut) {
      RRT_ERROR("tcp: rank %d sent a frame of unknown kind %u; dropping the connection", p.rank,
                f.kind);
      markDead(p, Status::ErrTransport);
      break;
    }
    if (avail < sizeof(PutHeader)) break;
    PutHeader h;
    memcpy(&h, p.rx.data() + p.rxHead, sizeof h);
    uint8_t* dst = const_cast<uint8_t*>(putTarget(p, h, 0));
    if (!dst) {
      markDead(p, Status::ErrTransport);
      break;
    }
    p.rxHead += sizeof h;
    const size_t have = std::min<size_t>(p.rxTail - p.rxHead, h.f.len);
    memcpy(dst, p.rx.data() + p.rxHead, have);
    p.rxHead += have;
    p.main.putDst = dst + have;
    p.main.putLeft = h.f.len - have;
    ++events;
  }
  // Make room for the rest of a partial frame.
  if (p.rxHead > 0 && p.rx.size() - p.rxTail < kMaxAm + sizeof(PutHeader)) {
    memmove(p.rx.data(), p.rx.data() + p.rxHead, p.rxTail - p.rxHead);
    p.rxTail -= p.rxHead;
    p.rxHead = 0;
  }
  return events;
}

// ---- memory domain --------------------------------------------------------------------------

Status TcpTransport::memReg(void* addr, size_t len, MemType type, MemHandle** out) {
  if (type != MemType::Host) return Status::ErrUnsupported;
  Region* r;
  if (!freeRegions_.empty()) {
    r = freeRegions_.back();
    freeRegions_.pop_back();
  } else {
    r = new Region;
  }
  // Unguessable and never reused within the job: a stale rkey matches nothing.
  uint64_t x = cookieSeed_ + (++cookieCount_) * 0x9e3779b97f4a7c15ull;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  r->cookie = x;
  r->addr = addr;
  r->length = len;
  regions_[x] = r;
  *out = r;
  return Status::Ok;
}

void TcpTransport::memDereg(MemHandle* mh) {
  Region* r = static_cast<Region*>(mh);
  if (!r) return;
  regions_.erase(r->cookie);
  r->cookie = 0;
  freeRegions_.push_back(r);
}

// ---- progress and failures ------------------------------------------------------------------

// The one-peer fast path (two-rank jobs; the ping-pong of a latency test): stream 0 of the only
// peer is read directly. A recv that finds nothing costs what epoll_wait costs, and a message it
// finds saves the epoll_wait that would have come before the recv: one system call of the three
// a message took (epoll_wait, recv, send). epoll_wait still runs on every kEpollEvery-th call
// (accepts from other ranks, errors), and on every call while anything else may need it: output
// waiting for EPOLLOUT, stripe streams connecting or with payload announced or in flight,
// handshakes.
bool TcpTransport::soloQuiet(const Peer& p) const {
  if (p.stalled || p.main.wantOut || handshakes_ > 0) return false;
  for (const Stripe& st : p.stripes)
    if (st.state != State::Established || st.link.wantOut || st.link.putLeft || st.hdrGot ||
        st.landed < st.expected)  // a striped payload announced on stream 0 is under way
      return false;
  return true;
}

int TcpTransport::progress() {
  if (polling_) return 0;
  polling_ = true;
  int events = 0;
  if (solo_ >= 0) {
    Peer& p = peers_[static_cast<size_t>(solo_)];
    if (p.state == State::Established && soloQuiet(p)) {
      events = readPeer(p);
      if (++directCalls_ % kEpollEvery != 0 && p.state == State::Established) {
        if (__builtin_expect(!failed_.empty(), 0)) events += reportFailures();
        polling_ = false;
        return events;
      }
    }
  }
  epoll_event evs[kMaxEvents];
  const int n = epoll_wait(epfd_, evs, kMaxEvents, 0);
  for (int i = 0; i < n; ++i) {
    const uint64_t d = evs[i].data.u64;
    const uint32_t idx = static_cast<uint32_t>(d);
    switch (d >> 32) {
      case kTagListen: onAccept(); break;
      case kTagIncoming:
        if (idx < incoming_.size() && incoming_[idx].fd >= 0) onIncoming(idx);
        break;
      case kTagPeer: {
        if (idx >= peers_.size()) break;
        Peer& p = peers_[idx];
        if (p.state == State::Connecting || p.state == State::HelloSent) {
          onConnectEvent(p, evs[i].events);
        } else if (p.state == State::Established) {
          // Stalled, stream 0 is not read: an error or hang-up on it fails the peer here, or
          // it would be reported again on every poll.
          if (p.stalled && (evs[i].events & (EPOLLERR | EPOLLHUP))) {
            RRT_WARN("tcp: connection to rank %d failed while waiting for stripe data", p.rank);
            markDead(p, Status::ErrProcFailed);
            break;
          }
          if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) events += readPeer(p);
          if ((evs[i].events & EPOLLOUT) && p.state == State::Established) flush(p, p.main);
        }
        break;
      }
      case kTagStripe: {
        const uint32_t rank = idx / kMaxStreams, k = idx % kMaxStreams;
        if (rank >= peers_.size() || peers_[rank].state != State::Established) break;
        Peer& p = peers_[rank];
        if (k == 0 || k >= p.streams) break;
        Stripe& s = p.stripes[k - 1];
        if (s.state == State::Connecting || s.state == State::HelloSent) {
          onStripeConnectEvent(p, k, evs[i].events);
        } else if (s.state == State::Established) {
          if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) events += readStripe(p, k);
          if ((evs[i].events & EPOLLOUT) && p.state == State::Established) flush(p, s.link);
        }
        break;
      }
    }
  }
  if (__builtin_expect(handshakes_ + stalls_ > 0, 0)) checkDeadlines();
  if (__builtin_expect(!failed_.empty(), 0)) events += reportFailures();
  polling_ = false;
  return events;
}

void TcpTransport::markDead(Peer& p, Status why) {
  if (p.state == State::Dead) return;
  if (p.state == State::Established && --established_ == 1) {
    for (const Peer& q : peers_)
      if (q.state == State::Established && &q != &p) solo_ = q.rank;
  } else if (p.state == State::Established) {
    solo_ = -1;
  }
  if (p.state == State::Connecting || p.state == State::HelloSent ||
      p.state == State::AwaitIncoming)
    --handshakes_;
  if (p.main.fd >= 0) close(p.main.fd);
  p.main.fd = -1;
  p.main.putLeft = 0;
  for (Stripe& s : p.stripes) {
    if (s.state == State::Connecting || s.state == State::HelloSent) --handshakes_;
    if (s.link.fd >= 0) close(s.link.fd);
    s.link.fd = -1;
    s.link.putLeft = 0;
  }
  p.state = State::Dead;
  if (p.stalled) --stalls_;
  p.stalled = false;
  p.main.wantIn = true;
  p.why = why;
  failed_.push_back(p.rank);
}

int TcpTransport::reportFailures() {
  int events = 0;
  while (!failed_.empty()) {
    Peer& p = peers_[failed_.back()];
    failed_.pop_back();
    if (p.failReported) continue;
    p.failReported = true;
    // Every queued put of the peer fails (the parts of a striped one on each of its streams).
    std::deque<OutItem> q;
    auto drain = [&q](Link& l) {
      q.insert(q.end(), l.txq.begin(), l.txq.end());
      l.txq.clear();
      l.txBuf.clear();
      l.txDone = 0;
    };
    drain(p.main);
    for (Stripe& s : p.stripes) drain(s.link);
    for (const OutItem& it : q)
      if (it.done) it.done->fn(it.done, Status::ErrProcFailed);
    RRT_WARN("tcp: rank %d is unreachable (%s)", p.rank, statusName(p.why));
    if (ctx_.peerFailed) ctx_.peerFailed(ctx_.handlerArg, p.rank, p.why);
    ++events;
  }
  return events;
}

}  // namespace

TransportPtr create(const Context& ctx, Status* st) {
  auto t = std::make_unique<TcpTransport>(ctx);
  *st = t->init();
  if (!ok(*st)) return nullptr;
  return t;
}

}  // namespace rrt::transport::tcp
