#include "runtime/transport/verbs/verbs_transport.h"

#include "rrt_config.h"  // RRT_HAVE_RDMACM

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/memory/reg_cache.h"
#include "runtime/transport/verbs/address.h"
#include "runtime/transport/verbs/bounce_pool.h"
#include "runtime/transport/verbs/device.h"
#include "runtime/transport/verbs/qp.h"
#ifdef RRT_HAVE_RDMACM
#include "runtime/transport/verbs/rdmacm.h"
#endif

namespace rrt::transport::verbs {
namespace {

constexpr int kPollBatch = 32;
constexpr uint32_t kSignalEvery = 16;         // an inline SEND is signalled at least this often
constexpr uint64_t kRecvBit = 1ull << 63;     // wr_id of an SRQ receive: kRecvBit | buffer index
constexpr uint32_t kCreditSlack = 2;          // SRQ buffers per peer beyond its credits
constexpr size_t kDefaultEagerBuf = 8192 + 64;
constexpr size_t kDefaultSendBufs = 256;
constexpr size_t kDefaultMaxZcopy = size_t{1} << 20;
constexpr uint32_t kSlowPollEvery = 256;  // progress() calls between looks at the async and rdma_cm fds

// A memory registration: the cache's handle and the transport's MemHandle in one.
struct VerbsMr final : MemHandle {
  ibv_mr* mr = nullptr;
  memory::RegEntry* entry = nullptr;
};

// One posted send work request, retired in order.
struct TxSlot {
  Completion* done = nullptr;  // get/put: fired when retired
  int32_t buf = -1;            // send bounce buffer to give back
  bool read = false;           // an RDMA READ (counts against maxReads)
};

struct PeerState {
  ibv_qp* qp = nullptr;
  uint32_t psn = 0;            // our starting PSN on this QP (published)
  bool connected = false;
  bool failed = false;
  bool creditDue = false;      // in creditDue_
  uint32_t credits = 0;        // SENDs we may still make into the peer's SRQ
  uint32_t owed = 0;           // the peer's buffers we re-posted and not yet told it about
  uint32_t sqFree = 0;         // send work requests we may still post
  uint32_t readsOut = 0;       // RDMA READs in flight
  uint32_t unsignaled = 0;     // unsignalled WRs since the last signalled one
  uint64_t head = 0, tail = 0; // slot counters: posted, retired
  std::vector<TxSlot> slots;   // ring of sendDepth (a power of two)
};

size_t roundPow2(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

Status wcStatusToStatus(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
      return Status::ErrTransport;
    default:
      return Status::ErrProcFailed;  // retry exceeded, RNR exceeded, flush, fatal: peer gone
  }
}

#ifdef RRT_HAVE_RDMACM
using CmOwnerBase = CmOwner;
#else
class CmOwnerBase {};
#endif

class VerbsTransport final : public Transport, public memory::RegDomain, public CmOwnerBase {
 public:
  explicit VerbsTransport(const Context& ctx) : ctx_(ctx) {}
  ~VerbsTransport() override;

  Status init();

  const char* name() const override { return "verbs"; }
  const Caps& caps() const override { return caps_; }
  std::string describe() const override;

  Status address(std::vector<uint8_t>* blob) override;
  Status start() override;
  bool reachable(int peer) const override {
    if (static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size)) return false;
    const PeerState& p = peers_[static_cast<size_t>(peer)];
    if (cm_ == CmKind::Rdmacm) return serves(peer) && !p.failed;  // connected on first use
    return p.qp != nullptr && p.connected && !p.failed;
  }
  Status connect(int peer, const void* blob, size_t len) override;

  Status amSend(int peer, AmId id, const void* hdr, size_t hdrLen, const void* payload,
                size_t len) override;
  Status get(int peer, void* local, size_t len, MemHandle* localMh, uint64_t remoteAddr,
             const void* rkey, size_t rkeyLen, Completion* done) override {
    return rdma(IBV_WR_RDMA_READ, peer, local, len, localMh, remoteAddr, rkey, rkeyLen, done);
  }
  Status put(int peer, const void* local, size_t len, MemHandle* localMh, uint64_t remoteAddr,
             const void* rkey, size_t rkeyLen, Completion* done) override {
    return rdma(IBV_WR_RDMA_WRITE, peer, const_cast<void*>(local), len, localMh, remoteAddr,
                rkey, rkeyLen, done);
  }

  Status memReg(void* addr, size_t len, MemType type, MemHandle** out) override;
  void memDereg(MemHandle* mh) override;
  size_t rkeyPack(const MemHandle* mh, void* out) const override;

  int progress() override;
  void disconnect(int peer) override;

 private:
  // memory::RegDomain
  Status reg(void* addr, size_t len, void** handle) override;
  void dereg(void* handle) override;

  bool serves(int peer) const;
  Status chooseCm();
  std::string cmName() const;
  Status newQp(int peer);
  Status parsePeer(int peer, const void* blob, size_t len, PeerAddress* out) const;
#ifdef RRT_HAVE_RDMACM
  // CmOwner
  Status cmQp(int peer, ibv_qp** qp) override;
  void cmEstablished(int peer) override;
  void cmFailed(int peer, Status why) override { failPeer(peer, why); }
#endif
  Status rdma(ibv_wr_opcode op, int peer, void* local, size_t len, MemHandle* localMh,
              uint64_t remoteAddr, const void* rkey, size_t rkeyLen, Completion* done);
  // Posts wr as slot of peer; NoResource / ErrTransport leave nothing posted.
  Status post(int peer, PeerState& p, ibv_send_wr& wr, const TxSlot& slot);
  void retireUpTo(PeerState& p, uint32_t idx);
  void sendCredits(int peer, PeerState& p);
  void onRecv(const ibv_wc& wc);
  int pollSlow();
  void onAsyncEvent(const ibv_async_event& ev);
  void failPeer(int peer, Status why);
  void repost(int32_t buf);

  Context ctx_;
  Caps caps_;
  Device dev_;
  QpSettings qs_;
  ibv_cq* cq_ = nullptr;
  ibv_srq* srq_ = nullptr;
  BouncePool recvPool_, sendPool_;
  std::vector<PeerState> peers_;
  std::unordered_map<uint32_t, int> qpnToPeer_;
  std::vector<int> creditDue_;
  std::unique_ptr<memory::RegCache> regCache_;
  uint32_t maxInline_ = ~0u;  // the smallest any QP granted
  uint32_t credits_ = 0, creditThreshold_ = 1, maxReads_ = 1;
  size_t srqDepth_ = 0, cqDepth_ = 0;
  uint32_t sendMask_ = 0;
  int served_ = 0;
  bool inProgress_ = false;
  CmKind cm_ = CmKind::Pmix;
  std::mt19937 rng_;  // starting PSNs
#ifdef RRT_HAVE_RDMACM
  std::unique_ptr<RdmaCm> rdmacm_;
#endif
  uint32_t slowTick_ = 0;
};

VerbsTransport::~VerbsTransport() {
#ifdef RRT_HAVE_RDMACM
  rdmacm_.reset();  // its ids first (a connected one tells the peer), then our QPs
#endif
  regCache_.reset();  // deregisters while the PD lives
  for (PeerState& p : peers_)
    if (p.qp) ibv_destroy_qp(p.qp);
  if (srq_) ibv_destroy_srq(srq_);
  if (cq_) ibv_destroy_cq(cq_);
  // The pools' MRs go with their members, before dev_ (declared earlier) frees the PD.
}

bool VerbsTransport::serves(int peer) const {
  if (peer == ctx_.rank) return false;
  // Same-node peers go to shm when it may be enabled (kTransports prefers shm anyway).
  const std::string& list = config::value(config::Tunable::Transports);
  bool shmMayRun = list == "auto" || list == "all";
  std::stringstream ss(list);
  std::string item;
  while (!shmMayRun && std::getline(ss, item, ','))
    if (item == "shm") shmMayRun = true;
  if (!shmMayRun || ctx_.localPeers.size() < 2) return true;
  return !std::binary_search(ctx_.localPeers.begin(), ctx_.localPeers.end(), peer);
}

Status VerbsTransport::init() {
  for (int w = 0; w < ctx_.size; ++w)
    if (serves(w)) ++served_;
  if (served_ == 0) return Status::ErrUnsupported;
  RRT_TRY(dev_.open(config::value(config::Tunable::IbDevices),
                    config::value(config::Tunable::IbGidIndex)));
  // Asynchronous events (a QP in ERR because the peer's request failed, a fatal CQ or device
  // error) are read from progress: never block on them.
  const int afl = fcntl(dev_.ctx->async_fd, F_GETFL);
  if (afl < 0 || fcntl(dev_.ctx->async_fd, F_SETFL, afl | O_NONBLOCK) < 0) {
    RRT_WARN("verbs: async event fd non-blocking: %s", strerror(errno));
    return Status::ErrTransport;
  }

  const ibv_device_attr& da = dev_.devAttr;
  const size_t eagerBuf = std::max<size_t>(
      64, config::sizeOr(config::Tunable::IbEagerBuf, kDefaultEagerBuf));
  credits_ = static_cast<uint32_t>(std::max<uint64_t>(2, config::sizeOr(config::Tunable::IbCredits, 32)));
  const size_t maxSrq = da.max_srq_wr > 0 ? static_cast<size_t>(da.max_srq_wr) : 0;
  if (maxSrq == 0) {
    RRT_WARN("verbs: %s has no SRQ support", dev_.name.c_str());
    return Status::ErrUnsupported;
  }
  srqDepth_ = config::sizeOr(config::Tunable::IbSrqDepth,
                             static_cast<uint64_t>(served_) * (credits_ + kCreditSlack));
  srqDepth_ = std::min(srqDepth_, maxSrq - 1);
  // Credits never promise more than the SRQ holds, so a peer never meets an empty SRQ (no RNR).
  const size_t perPeer = srqDepth_ / static_cast<size_t>(served_);
  if (perPeer < kCreditSlack + 1) {
    RRT_WARN("verbs: SRQ of %zu buffers too small for %d peers", srqDepth_, served_);
    return Status::ErrUnsupported;
  }
  credits_ = static_cast<uint32_t>(std::min<size_t>(credits_, perPeer - kCreditSlack));
  creditThreshold_ = std::max<uint32_t>(1, credits_ / 2);

  qs_.sendDepth = static_cast<uint32_t>(roundPow2(std::min<uint64_t>(
      config::sizeOr(config::Tunable::IbTxDepth, 256), static_cast<uint64_t>(da.max_qp_wr))));
  if (qs_.sendDepth > static_cast<uint32_t>(da.max_qp_wr)) qs_.sendDepth >>= 1;
  qs_.maxInline = static_cast<uint32_t>(config::sizeOr(config::Tunable::IbInline, 256));
  const uint64_t rdDevice = std::max(1, da.max_qp_init_rd_atom);
  maxReads_ = static_cast<uint32_t>(std::min<uint64_t>(
      config::sizeOr(config::Tunable::IbMaxRd, std::min<uint64_t>(16, rdDevice)), 255));
  maxReads_ = std::max<uint32_t>(1, maxReads_);
  qs_.maxRdAtomic = static_cast<uint8_t>(maxReads_);
  qs_.timeout = static_cast<uint8_t>(config::sizeOr(config::Tunable::IbTimeout, 18) & 31);
  qs_.retryCnt = static_cast<uint8_t>(std::min<uint64_t>(7, config::sizeOr(config::Tunable::IbRetryCnt, 7)));
  qs_.sl = static_cast<uint8_t>(config::sizeOr(config::Tunable::IbSl, 0) & 15);
  qs_.trafficClass = static_cast<uint8_t>(config::sizeOr(config::Tunable::IbTrafficClass, 0));
  sendMask_ = qs_.sendDepth - 1;

  cqDepth_ = srqDepth_ + static_cast<size_t>(served_) * qs_.sendDepth + 64;
  cqDepth_ = std::min<size_t>(cqDepth_, static_cast<size_t>(da.max_cqe));
  cq_ = ibv_create_cq(dev_.ctx, static_cast<int>(cqDepth_), nullptr, nullptr, 0);
  if (!cq_) {
    RRT_WARN("verbs: ibv_create_cq(%zu): %s", cqDepth_, strerror(errno));
    return Status::ErrTransport;
  }
  ibv_srq_init_attr sa{};
  sa.attr.max_wr = static_cast<uint32_t>(srqDepth_);
  sa.attr.max_sge = 1;
  srq_ = ibv_create_srq(dev_.pd, &sa);
  if (!srq_) {
    RRT_WARN("verbs: ibv_create_srq(%zu): %s", srqDepth_, strerror(errno));
    return Status::ErrTransport;
  }
  RRT_TRY(recvPool_.init(dev_.pd, srqDepth_, eagerBuf));
  for (size_t i = 0; i < srqDepth_; ++i) repost(recvPool_.take());
  const size_t sendBufs = config::sizeOr(config::Tunable::IbSendBufs, kDefaultSendBufs);
  RRT_TRY(sendPool_.init(dev_.pd, std::max<size_t>(1, sendBufs), eagerBuf));

  peers_.resize(static_cast<size_t>(ctx_.size));
  rng_.seed(static_cast<uint32_t>(getpid()) * 2654435761u ^ static_cast<uint32_t>(ctx_.rank));
  RRT_TRY(chooseCm());
  if (cm_ == CmKind::Pmix)  // every QP now, connected at start(); rdmacm makes them on first use
    for (int w = 0; w < ctx_.size; ++w)
      if (serves(w)) RRT_TRY(newQp(w));
  creditDue_.reserve(peers_.size());

  memory::RegCache::Limits lim;
  lim.enabled = config::boolOr(config::Tunable::IbRegCache, true);
  lim.maxBytes = config::sizeOr(config::Tunable::IbRegCacheBytes, size_t{1} << 30);
  lim.maxEntries = std::max<uint64_t>(1, config::sizeOr(config::Tunable::IbRegCacheEntries, 1024));
  regCache_ = std::make_unique<memory::RegCache>(this, lim);

  const uint64_t maxMsg = dev_.portAttr.max_msg_sz ? dev_.portAttr.max_msg_sz : (1ull << 31);
  caps_.flags = kAmBcopy | kGetZcopy | kPutZcopy | kOrdered | kNeedsReg;
  caps_.maxAm = recvPool_.bufBytes() - sizeof(AmHeader);
  caps_.minZcopy = 0;
  caps_.maxZcopy = std::min<uint64_t>(
      maxMsg, config::sizeOr(config::Tunable::IbMaxZcopy, kDefaultMaxZcopy));
  caps_.maxZcopy = std::max<size_t>(caps_.maxZcopy, 4096);
  caps_.zcopyMemTypes = memory::memTypeBit(MemType::Host);
  caps_.latencyUs = 2.0;
  caps_.bandwidthMBs = dev_.portMBs();
  caps_.eagerDefault = std::min<size_t>(8192, caps_.maxAm - 32);
  return Status::Ok;
}

// RRT_VERBS_CM. auto: rdmacm on a RoCE port where the kernel offers rdma_cm, else pmix. On RoCE
// the kernel's rdma_cm resolves what the fabric needs from its IP configuration (the peer's MAC
// through ARP/ND, VLAN, the GID index of the source address and RoCE version), and QPs are made
// only for the peers a rank talks to. On InfiniBand a LID needs no resolution, rdma_cm would need
// IPoIB configured, and the PMIx exchange connects every pair with one fence.
Status VerbsTransport::chooseCm() {
  const std::string& want = config::value(config::Tunable::VerbsCm);
  if (want != "auto" && want != "pmix" && want != "rdmacm")
    RRT_WARN("RRT_VERBS_CM=%s is not auto, pmix or rdmacm: using auto", want.c_str());
  cm_ = CmKind::Pmix;
  if (want == "pmix" || (want != "rdmacm" && !dev_.roce)) return Status::Ok;
#ifdef RRT_HAVE_RDMACM
  std::string why;
  if (want != "rdmacm" && !rdmacmAvailable(&why)) return Status::Ok;
  RdmaCm::Settings s;
  s.qp = qs_;
  s.setupTimeoutS = config::doubleOr(config::Tunable::VerbsCmTimeout, 30);
  auto cm = std::make_unique<RdmaCm>(this, ctx_.rank, ctx_.size, jobHash(ctx_.jobId, ctx_.secret));
  Status st = cm->open(dev_, s);
  if (st == Status::Ok) {
    rdmacm_ = std::move(cm);
    cm_ = CmKind::Rdmacm;
    return Status::Ok;
  }
  if (want != "rdmacm") return Status::Ok;  // auto: the PMIx exchange instead
  RRT_WARN("verbs: RRT_VERBS_CM=rdmacm but rdma_cm cannot serve %s port %u", dev_.name.c_str(),
           dev_.port);
  return st == Status::ErrUnsupported ? st : Status::ErrUnsupported;
#else
  if (want != "rdmacm") return Status::Ok;
  RRT_WARN("verbs: RRT_VERBS_CM=rdmacm but this build has no librdmacm");
  return Status::ErrUnsupported;
#endif
}

std::string VerbsTransport::cmName() const {
#ifdef RRT_HAVE_RDMACM
  if (cm_ == CmKind::Rdmacm) return "rdmacm(" + endpointString(rdmacm_->endpoint()) + ")";
#endif
  return "pmix";
}

// A QP (INIT) for peer w on the CQ and SRQ, with its credits and send slots.
Status VerbsTransport::newQp(int w) {
  PeerState& p = peers_[static_cast<size_t>(w)];
  if (p.qp) return Status::Ok;
  uint32_t inl = 0;
  RRT_TRY(createRcQp(dev_, cq_, srq_, qs_, &p.qp, &inl));
  maxInline_ = std::min(maxInline_, inl);
  p.psn = rng_() & 0xffffff;
  p.credits = credits_;
  p.sqFree = qs_.sendDepth;
  p.slots.resize(qs_.sendDepth);
  qpnToPeer_[p.qp->qp_num] = w;
  return Status::Ok;
}

#ifdef RRT_HAVE_RDMACM
Status VerbsTransport::cmQp(int peer, ibv_qp** qp) {
  if (static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size) || !serves(peer))
    return Status::ErrRank;
  if (peers_[static_cast<size_t>(peer)].failed) return Status::ErrProcFailed;
  RRT_TRY(newQp(peer));
  *qp = peers_[static_cast<size_t>(peer)].qp;
  return Status::Ok;
}

void VerbsTransport::cmEstablished(int peer) {
  PeerState& p = peers_[static_cast<size_t>(peer)];
  if (!p.failed && p.qp) p.connected = true;  // the engine retries its queued sends from progress
}
#endif

std::string VerbsTransport::describe() const {
  char buf[512];
  snprintf(buf, sizeof buf,
           "device=%s port=%u link=%s lid=%u gid_index=%d mtu=%s qps=%d srq=%zu x %zuB "
           "credits=%u send_bufs=%zu tx_depth=%u inline=%s max_rd=%u cq=%zu reg_cache=%s cm=%s",
           dev_.name.c_str(), dev_.port, dev_.roce ? "ethernet(RoCE)" : "infiniband",
           dev_.portAttr.lid, dev_.gidIndex, mtuName(dev_.portAttr.active_mtu), served_,
           srqDepth_, recvPool_.bufBytes(), credits_, sendPool_.count(), qs_.sendDepth,
           maxInline_ == ~0u ? "(no QP yet)" : std::to_string(maxInline_).c_str(), maxReads_, cqDepth_,
           config::boolOr(config::Tunable::IbRegCache, true) ? "on" : "off", cmName().c_str());
  return buf;
}

// ---- wire-up --------------------------------------------------------------------------------

Status VerbsTransport::address(std::vector<uint8_t>* blob) {
  AddressHeader h{};
  h.lid = dev_.portAttr.lid;
  if (dev_.gidIndex >= 0) {
    memcpy(h.gid, dev_.gid.raw, 16);
    h.hasGid = 1;
  }
  h.mtu = static_cast<uint8_t>(dev_.portAttr.active_mtu);
  h.linkLayer = dev_.portAttr.link_layer;
#ifdef RRT_HAVE_RDMACM
  if (cm_ == CmKind::Rdmacm) {
    packAddress(h, {}, &rdmacm_->endpoint(), blob);
    return Status::Ok;
  }
#endif
  std::vector<QpSlot> slots(static_cast<size_t>(ctx_.size));
  for (int w = 0; w < ctx_.size; ++w) {
    const PeerState& p = peers_[static_cast<size_t>(w)];
    slots[static_cast<size_t>(w)] = QpSlot{p.qp ? p.qp->qp_num : 0, p.psn};
  }
  packAddress(h, slots, nullptr, blob);
  return Status::Ok;
}

Status VerbsTransport::parsePeer(int peer, const void* blob, size_t len, PeerAddress* out) const {
  Status st = parseAddress(blob, len, ctx_.size, ctx_.rank, out);
  if (st != Status::Ok) return st;
  if (out->cm != cm_) {
    RRT_WARN("verbs: rank %d connects through %s, this rank through %s (set RRT_VERBS_CM alike)",
             peer, out->cm == CmKind::Rdmacm ? "rdmacm" : "pmix",
             cm_ == CmKind::Rdmacm ? "rdmacm" : "pmix");
    return Status::ErrWireup;
  }
  return Status::Ok;
}

Status VerbsTransport::start() {
  if (cm_ != CmKind::Pmix) return Status::Ok;
  for (int w = 0; w < ctx_.size; ++w) {
    PeerState& p = peers_[static_cast<size_t>(w)];
    if (!p.qp) continue;
    std::vector<uint8_t> blob;
    PeerAddress a;
    Status st = ctx_.lookup ? ctx_.lookup(w, "rrt.verbs", &blob) : Status::ErrWireup;
    if (st == Status::Ok) st = parsePeer(w, blob.data(), blob.size(), &a);
    if (st == Status::Ok) st = connectRcQp(dev_, p.qp, qs_, a.qp, p.psn);
    if (st != Status::Ok) {
      RRT_WARN("verbs: no connection to rank %d: %s", w, statusName(st));
      p.failed = true;  // not reachable(): another transport, or none, serves it
      continue;
    }
    p.connected = true;
  }
  return Status::Ok;
}

Status VerbsTransport::connect(int peer, const void* blob, size_t len) {
  if (!reachable(peer)) return Status::ErrUnsupported;
  PeerAddress a;
  RRT_TRY(parsePeer(peer, blob, len, &a));
#ifdef RRT_HAVE_RDMACM
  if (cm_ == CmKind::Rdmacm) return rdmacm_->connect(peer, a.ep);  // returns at once
#endif
  return Status::Ok;
}

void VerbsTransport::disconnect(int peer) {
  if (static_cast<unsigned>(peer) < static_cast<unsigned>(ctx_.size))
    failPeer(peer, Status::ErrProcFailed);
}

// ---- data path ------------------------------------------------------------------------------

Status VerbsTransport::post(int peer, PeerState& p, ibv_send_wr& wr, const TxSlot& slot) {
  const uint32_t idx = static_cast<uint32_t>(p.head) & sendMask_;
  const bool signal = slot.done || slot.buf >= 0 || p.unsignaled + 1 >= kSignalEvery ||
                      p.sqFree <= kSignalEvery;
  wr.wr_id = (static_cast<uint64_t>(static_cast<uint32_t>(peer)) << 32) | idx;
  wr.next = nullptr;
  if (signal) wr.send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(p.qp, &wr, &bad)) {
    if (rc == ENOMEM) return Status::NoResource;
    RRT_WARN("verbs: ibv_post_send to rank %d: %s", peer, strerror(rc));
    return Status::ErrTransport;
  }
  p.slots[idx] = slot;
  ++p.head;
  --p.sqFree;
  p.unsignaled = signal ? 0 : p.unsignaled + 1;
  return Status::Ok;
}

Status VerbsTransport::amSend(int peer, AmId id, const void* hdr, size_t hdrLen,
                              const void* payload, size_t len) {
  if (__builtin_expect(static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size), 0))
    return Status::ErrRank;
  PeerState& p = peers_[static_cast<size_t>(peer)];
  if (__builtin_expect(!p.connected || p.failed, 0))  // rdmacm: until the handshake is done
    return p.failed ? Status::ErrProcFailed : cm_ == CmKind::Rdmacm ? Status::NoResource : Status::ErrRank;
  const size_t total = sizeof(AmHeader) + hdrLen + len;
  if (__builtin_expect(total - sizeof(AmHeader) > caps_.maxAm || id == kCreditOnly, 0))
    return Status::ErrArg;
  // One send slot stays free for credit messages.
  if (p.credits == 0 || p.sqFree <= 1) return Status::NoResource;

  AmHeader h{id, 0, static_cast<uint16_t>(std::min<uint32_t>(p.owed, 0xffff))};
  ibv_sge sge[3];
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  TxSlot slot;
  if (total <= maxInline_) {
    int n = 0;
    sge[n++] = {reinterpret_cast<uintptr_t>(&h), sizeof h, 0};
    if (hdrLen) sge[n++] = {reinterpret_cast<uintptr_t>(hdr), static_cast<uint32_t>(hdrLen), 0};
    if (len) sge[n++] = {reinterpret_cast<uintptr_t>(payload), static_cast<uint32_t>(len), 0};
    wr.sg_list = sge;
    wr.num_sge = n;
    wr.send_flags = IBV_SEND_INLINE;
  } else {
    slot.buf = sendPool_.take();
    if (slot.buf < 0) return Status::NoResource;
    char* b = sendPool_.at(slot.buf);
    memcpy(b, &h, sizeof h);
    if (hdrLen) memcpy(b + sizeof h, hdr, hdrLen);
    if (len) memcpy(b + sizeof h + hdrLen, payload, len);
    sge[0] = {reinterpret_cast<uintptr_t>(b), static_cast<uint32_t>(total), sendPool_.lkey()};
    wr.sg_list = sge;
    wr.num_sge = 1;
  }
  Status st = post(peer, p, wr, slot);
  if (st != Status::Ok) {
    if (slot.buf >= 0) sendPool_.give(slot.buf);
    return st;
  }
  --p.credits;
  p.owed -= h.credits;
  return Status::Ok;
}

Status VerbsTransport::rdma(ibv_wr_opcode op, int peer, void* local, size_t len,
                            MemHandle* localMh, uint64_t remoteAddr, const void* rkey,
                            size_t rkeyLen, Completion* done) {
  if (static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size)) return Status::ErrRank;
  PeerState& p = peers_[static_cast<size_t>(peer)];
  if (!p.connected || p.failed)
    return p.failed ? Status::ErrProcFailed : cm_ == CmKind::Rdmacm ? Status::NoResource : Status::ErrRank;
  if (len == 0) return Status::Ok;
  auto* mr = static_cast<VerbsMr*>(localMh);
  if (!mr || !mr->mr || rkeyLen != sizeof(uint32_t) || len > caps_.maxZcopy || !done ||
      reinterpret_cast<uintptr_t>(local) < reinterpret_cast<uintptr_t>(mr->addr) ||
      reinterpret_cast<uintptr_t>(local) + len >
          reinterpret_cast<uintptr_t>(mr->addr) + mr->length)
    return Status::ErrArg;
  const bool read = op == IBV_WR_RDMA_READ;
  if (p.sqFree <= 1 || (read && p.readsOut >= maxReads_)) return Status::NoResource;
  uint32_t rk;
  memcpy(&rk, rkey, sizeof rk);
  ibv_sge sge{reinterpret_cast<uintptr_t>(local), static_cast<uint32_t>(len), mr->mr->lkey};
  ibv_send_wr wr{};
  wr.opcode = op;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.wr.rdma.remote_addr = remoteAddr;
  wr.wr.rdma.rkey = rk;
  TxSlot slot;
  slot.done = done;
  slot.read = read;
  Status st = post(peer, p, wr, slot);
  if (st != Status::Ok) return st;
  if (read) ++p.readsOut;
  return Status::InProgress;
}

void VerbsTransport::sendCredits(int peer, PeerState& p) {
  if (p.owed == 0 || p.failed || !p.connected || p.sqFree == 0) return;
  AmHeader h{kCreditOnly, 0, static_cast<uint16_t>(std::min<uint32_t>(p.owed, 0xffff))};
  ibv_sge sge;
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  TxSlot slot;
  if (maxInline_ >= sizeof h) {
    sge = {reinterpret_cast<uintptr_t>(&h), sizeof h, 0};
    wr.send_flags = IBV_SEND_INLINE;
  } else {
    slot.buf = sendPool_.take();
    if (slot.buf < 0) return;  // retried at the next progress()
    memcpy(sendPool_.at(slot.buf), &h, sizeof h);
    sge = {reinterpret_cast<uintptr_t>(sendPool_.at(slot.buf)), sizeof h, sendPool_.lkey()};
  }
  if (post(peer, p, wr, slot) != Status::Ok) {
    if (slot.buf >= 0) sendPool_.give(slot.buf);
    return;
  }
  p.owed -= h.credits;
}

void VerbsTransport::repost(int32_t buf) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(recvPool_.at(buf)),
              static_cast<uint32_t>(recvPool_.bufBytes()), recvPool_.lkey()};
  ibv_recv_wr wr{};
  wr.wr_id = kRecvBit | static_cast<uint32_t>(buf);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq_, &wr, &bad)) {
    RRT_ERROR("verbs: re-posting a receive buffer: %s", strerror(rc));
    recvPool_.give(buf);
  }
}

void VerbsTransport::retireUpTo(PeerState& p, uint32_t idx) {
  for (;;) {
    const uint32_t i = static_cast<uint32_t>(p.tail) & sendMask_;
    if (p.tail == p.head) return;  // already retired (e.g. by failPeer)
    TxSlot s = p.slots[i];
    p.slots[i] = TxSlot{};
    ++p.tail;
    ++p.sqFree;
    if (s.buf >= 0) sendPool_.give(s.buf);
    if (s.read) --p.readsOut;
    if (s.done) s.done->fn(s.done, Status::Ok);
    if (i == idx) return;
  }
}

void VerbsTransport::onRecv(const ibv_wc& wc) {
  const int32_t buf = static_cast<int32_t>(wc.wr_id & 0xffffffffu);
  auto it = qpnToPeer_.find(wc.qp_num);
  if (it == qpnToPeer_.end()) {
    RRT_WARN("verbs: receive on unknown QP %u dropped", wc.qp_num);
    repost(buf);
    return;
  }
  const int src = it->second;
  PeerState& p = peers_[static_cast<size_t>(src)];
  const char* data = recvPool_.at(buf);
  AmHeader h;
  if (wc.byte_len < sizeof h) {
    RRT_WARN("verbs: %u-byte message from rank %d dropped", wc.byte_len, src);
    repost(buf);
    return;
  }
  memcpy(&h, data, sizeof h);
  p.credits += h.credits;
  if (p.credits > credits_) {
    RRT_WARN("verbs: rank %d returned more credits than it had (%u)", src, p.credits);
    p.credits = credits_;
  }
  if (h.id != kCreditOnly && ctx_.amHandler)
    ctx_.amHandler(ctx_.handlerArg, src, h.id, data + sizeof h, wc.byte_len - sizeof h);
  repost(buf);
  if (h.id != kCreditOnly) {
    ++p.owed;
    if (p.owed >= creditThreshold_ && !p.creditDue) {
      p.creditDue = true;
      creditDue_.push_back(src);
    }
  }
}

int VerbsTransport::pollSlow() {
  int n = 0;
#ifdef RRT_HAVE_RDMACM
  if (rdmacm_) n += rdmacm_->poll();
#endif
  ibv_async_event ev;
  while (ibv_get_async_event(dev_.ctx, &ev) == 0) {
    onAsyncEvent(ev);
    ibv_ack_async_event(&ev);
    ++n;
  }
  return n;
}

// An error that moved a peer's QP to ERR on our side — e.g. the peer's RDMA READ or WRITE was
// refused by our device, so our QP went to ERR too without any completion of ours — fails that
// peer here as well: its requests end with an error instead of waiting for a FIN that cannot
// come (a QP in ERR carries nothing).
void VerbsTransport::onAsyncEvent(const ibv_async_event& ev) {
  switch (ev.event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
    case IBV_EVENT_PATH_MIG_ERR: {
      auto it = qpnToPeer_.find(ev.element.qp->qp_num);
      if (it == qpnToPeer_.end()) return;
      PeerState& p = peers_[static_cast<size_t>(it->second)];
      if (p.failed) return;  // our own failPeer() moved it to ERR
      RRT_ERROR("verbs: the queue pair to rank %d failed (%s)", it->second,
                ibv_event_type_str(ev.event_type));
      failPeer(it->second, Status::ErrProcFailed);
      return;
    }
    case IBV_EVENT_CQ_ERR:
    case IBV_EVENT_DEVICE_FATAL:
      RRT_ERROR("verbs: %s: failing every peer", ibv_event_type_str(ev.event_type));
      for (int w = 0; w < ctx_.size; ++w)
        if (peers_[static_cast<size_t>(w)].qp) failPeer(w, Status::ErrTransport);
      return;
    case IBV_EVENT_PORT_ERR:
      RRT_WARN("verbs: %s port %u went down", dev_.name.c_str(), dev_.port);
      return;
    default:
      return;  // SRQ limit, port active, COMM_EST, LID/GID/PKEY changes: nothing to do
  }
}

void VerbsTransport::failPeer(int peer, Status why) {
  PeerState& p = peers_[static_cast<size_t>(peer)];
  if (p.failed) return;
  p.failed = true;
  if (p.qp) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    (void)ibv_modify_qp(p.qp, &a, IBV_QP_STATE);
  }
  while (p.tail != p.head) {
    const uint32_t i = static_cast<uint32_t>(p.tail) & sendMask_;
    TxSlot s = p.slots[i];
    p.slots[i] = TxSlot{};
    ++p.tail;
    ++p.sqFree;
    if (s.buf >= 0) sendPool_.give(s.buf);
    if (s.done) s.done->fn(s.done, why);
  }
  p.readsOut = 0;
  if (ctx_.peerFailed) ctx_.peerFailed(ctx_.handlerArg, peer, why);
}

int VerbsTransport::progress() {
  if (inProgress_) return 0;
  inProgress_ = true;
  int events = 0;
#ifdef RRT_HAVE_RDMACM
  // rdma_cm and async events cost a system call to look for: rdma_cm at every call while a
  // handshake is under way; both at every kSlowPollEvery-th call (incoming requests,
  // disconnections, a QP the peer's error moved to ERR).
  if (rdmacm_ && rdmacm_->busy()) events += rdmacm_->poll();
#endif
  if (__builtin_expect(++slowTick_ % kSlowPollEvery == 0, 0)) events += pollSlow();
  ibv_wc wc[kPollBatch];
  int n;
  do {
    n = ibv_poll_cq(cq_, kPollBatch, wc);
    if (n < 0) {
      RRT_ERROR("verbs: ibv_poll_cq failed");
      break;
    }
    for (int i = 0; i < n; ++i) {
      const ibv_wc& c = wc[i];
      if (c.wr_id & kRecvBit) {
        if (c.status == IBV_WC_SUCCESS) {
          onRecv(c);
        } else {
          const int32_t buf = static_cast<int32_t>(c.wr_id & 0xffffffffu);
          auto it = qpnToPeer_.find(c.qp_num);
          if (c.status != IBV_WC_WR_FLUSH_ERR)
            RRT_WARN("verbs: receive error %s", ibv_wc_status_str(c.status));
          repost(buf);
          if (it != qpnToPeer_.end() && c.status != IBV_WC_WR_FLUSH_ERR)
            failPeer(it->second, wcStatusToStatus(c.status));
        }
        continue;
      }
      const int peer = static_cast<int>(c.wr_id >> 32);
      if (static_cast<unsigned>(peer) >= peers_.size()) continue;
      PeerState& p = peers_[static_cast<size_t>(peer)];
      if (p.failed) continue;  // its slots were retired by failPeer
      if (c.status != IBV_WC_SUCCESS) {
        RRT_ERROR("verbs: %s to rank %d failed: %s", c.opcode == IBV_WC_RDMA_READ ? "RDMA READ"
                  : c.opcode == IBV_WC_RDMA_WRITE ? "RDMA WRITE" : "SEND",
                  peer, ibv_wc_status_str(c.status));
        failPeer(peer, wcStatusToStatus(c.status));
        continue;
      }
      retireUpTo(p, static_cast<uint32_t>(c.wr_id & 0xffffffffu));
    }
    events += n;
  } while (n == kPollBatch);
  for (size_t i = 0; i < creditDue_.size(); ++i) {
    PeerState& p = peers_[static_cast<size_t>(creditDue_[i])];
    p.creditDue = false;
    if (p.owed >= creditThreshold_) sendCredits(creditDue_[i], p);
    if (p.owed >= creditThreshold_ && !p.failed) {  // no send slot now: keep it due
      p.creditDue = true;
      continue;
    }
    creditDue_[i] = creditDue_.back();
    creditDue_.pop_back();
    --i;
  }
  regCache_->purge();
  inProgress_ = false;
  return events;
}

// ---- memory domain --------------------------------------------------------------------------

Status VerbsTransport::reg(void* addr, size_t len, void** handle) {
  ibv_mr* mr = ibv_reg_mr(dev_.pd, addr, len,
                          IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
                              IBV_ACCESS_REMOTE_WRITE);
  if (!mr) {
    RRT_WARN("verbs: ibv_reg_mr(%p, %zu): %s", addr, len, strerror(errno));
    return errno == ENOMEM ? Status::ErrNoMemory : Status::ErrTransport;
  }
  auto* v = new VerbsMr;
  v->mr = mr;
  v->addr = addr;
  v->length = len;
  *handle = v;
  return Status::Ok;
}

void VerbsTransport::dereg(void* handle) {
  auto* v = static_cast<VerbsMr*>(handle);
  if (v->mr) ibv_dereg_mr(v->mr);
  delete v;
}

Status VerbsTransport::memReg(void* addr, size_t len, MemType type, MemHandle** out) {
  *out = nullptr;
  if (type != MemType::Host) return Status::ErrUnsupported;
  memory::RegEntry* e = nullptr;
  RRT_TRY(regCache_->get(addr, len, &e));
  auto* v = static_cast<VerbsMr*>(e->handle);
  v->entry = e;
  *out = v;
  return Status::Ok;
}

void VerbsTransport::memDereg(MemHandle* mh) {
  if (mh) regCache_->put(static_cast<VerbsMr*>(mh)->entry);
}

size_t VerbsTransport::rkeyPack(const MemHandle* mh, void* out) const {
  const auto* v = static_cast<const VerbsMr*>(mh);
  if (!v || !v->mr) return 0;
  memcpy(out, &v->mr->rkey, sizeof(uint32_t));
  return sizeof(uint32_t);
}

}  // namespace

TransportPtr create(const Context& ctx, Status* st) {
  auto t = std::make_unique<VerbsTransport>(ctx);
  *st = t->init();
  if (*st != Status::Ok) return nullptr;
  return t;
}

}  // namespace rrt::transport::verbs
