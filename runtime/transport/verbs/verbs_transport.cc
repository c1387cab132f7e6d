#include "runtime/transport/verbs/verbs_transport.h"

#include "rrt_config.h"  // RRT_HAVE_RDMACM

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <time.h>
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
#include "runtime/transport/verbs/eager_classes.h"
#include "runtime/transport/verbs/gdr.h"
#include "runtime/transport/verbs/mr.h"
#include "runtime/transport/verbs/qp.h"
#ifdef RRT_HAVE_RDMACM
#include "runtime/transport/verbs/rdmacm.h"
#endif

namespace rrt::transport::verbs {
namespace {

constexpr int kPollBatch = 32;
constexpr uint32_t kSignalEvery = 16;         // an inline SEND is signalled at least this often
constexpr uint64_t kRecvBit = 1ull << 63;     // SRQ receive wr_id: kRecvBit | class << 32 | buffer
constexpr uint32_t kCreditSlack = 2;          // SRQ buffers per peer beyond its credits
constexpr size_t kDefaultEagerBuf = 8192 + 64;
constexpr size_t kDefaultSendBufs = 256;
constexpr size_t kDefaultMaxZcopy = size_t{1} << 20;
// progress() calls between looks at the clock that decides whether to read the async-event and
// rdma_cm fds (a system call each): at most once per kSlowPollMs, so a data path that is busy for
// less than that makes none.
constexpr uint32_t kSlowPollEvery = 64;
constexpr int64_t kSlowPollMs = 10;
// Receive buffers go back to their SRQ kRepostBatch at a time: one ibv_post_srq_recv with a
// chain of work requests (as ibv_rc_pingpong and UCX post receives), so the call's fixed cost
// (a lock, and a doorbell on hardware) is paid once a batch. Each SRQ holds kRepostBatch
// buffers beyond what the credits promise: those waiting in the batch never leave a credit
// without a posted buffer behind it.
constexpr int kRepostBatch = 16;

int64_t coarseMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// One posted send work request, retired in order.
struct TxSlot {
  Completion* done = nullptr;  // get/put: fired when retired
  int32_t buf = -1;            // send bounce buffer to give back
  bool read = false;           // an RDMA READ (counts against maxReads)
};

// One RC QP to a peer: class c's QP sends into the peer's class-c SRQ and receives into ours.
// Send work requests complete in order per QP, so each QP has its own ring of slots.
struct QpState {
  ibv_qp* qp = nullptr;
  uint32_t psn = 0;            // our starting PSN on this QP (published)
  uint32_t sqFree = 0;         // send work requests we may still post
  uint32_t unsignaled = 0;     // unsignalled WRs since the last signalled one
  uint64_t head = 0, tail = 0; // slot counters: posted, retired
  std::vector<TxSlot> slots;   // ring of sendDepth (a power of two)
};

// A message that arrived ahead of its sequence number (it came on another class's QP than the
// one before it): its receive buffer is kept until the ones before it are delivered.
struct Held {
  int32_t buf = -1;
  uint8_t cls = 0;
  uint32_t len = 0;
};

struct PeerState {
  QpState q[kMaxEagerClasses];
  bool connected = false;
  bool failed = false;
  bool creditDue = false;      // in creditDue_
  bool classesKnown = false;   // peerBuf/credits set from the peer's address
  uint32_t peerBuf[kMaxEagerClasses] = {};  // the peer's receive buffer bytes per class
  uint32_t credits[kMaxEagerClasses] = {};  // SENDs we may still make into the peer's class SRQ
  uint32_t maxCredits[kMaxEagerClasses] = {};  // what the peer grants (its address says)
  uint32_t owed[kMaxEagerClasses] = {};     // its buffers we re-posted, not yet told about
  uint32_t readsOut = 0;       // RDMA READs in flight (on the last class's QP)
  uint32_t txSeq = 0, rxSeq = 0;  // active-message sequence: next to send, next to deliver
  uint32_t heldCount = 0;
  std::vector<Held> held;      // ring indexed by seq, a power of two >= the credits we grant
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
    return p.q[0].qp != nullptr && p.connected && !p.failed;
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
  int eventFd() const override { return channel_ ? channel_->fd : -1; }
  bool armEventFd() override;
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
  // Posts wr as slot of the peer's class-cls QP; NoResource / ErrTransport leave nothing posted.
  Status post(int peer, int cls, ibv_send_wr& wr, const TxSlot& slot);
  void retireUpTo(PeerState& p, QpState& q, uint32_t idx);
  void sendCredits(int peer, PeerState& p);
  void onRecv(const ibv_wc& wc);
  void deliver(int src, PeerState& p, int cls, int32_t buf, uint32_t len);
  void takeCredits(int src, PeerState& p, int cls, uint32_t n);
  void setPeerClasses(PeerState& p, const EagerClasses& c);
  int pollSlow();
  void drainChannel();
  void onAsyncEvent(const ibv_async_event& ev);
  void failPeer(int peer, Status why);
  void repost(int cls, int32_t buf);
  void flushReposts(int cls);
  int rdmaClass() const { return classes_.n - 1; }  // RDMA READ/WRITE go on the last QP

  Context ctx_;
  Caps caps_;
  Device dev_;
  QpSettings qs_;
  ibv_cq* cq_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;  // RRT_IB_COMP_CHANNEL: what an idle rank sleeps on
  bool armed_ = false;                   // ibv_req_notify_cq done, its event not yet read
  EagerClasses classes_;  // ours: receive buffer sizes and the credits we grant each peer
  ibv_srq* srq_[kMaxEagerClasses] = {};
  BouncePool recvPool_[kMaxEagerClasses];
  BouncePool sendPool_;
  size_t srqDepth_[kMaxEagerClasses] = {};
  uint32_t creditThreshold_[kMaxEagerClasses] = {};
  uint32_t heldRing_ = 1;  // Held entries per peer
  std::vector<PeerState> peers_;
  std::unordered_map<uint32_t, int> qpnToPeer_;
  std::vector<int> creditDue_;
  std::unique_ptr<memory::RegCache> regCache_;
  std::unique_ptr<GdrRegistrations> gdr_;  // GPU memory (GPUDirect RDMA)
  uint32_t maxInline_ = ~0u;  // the smallest any QP granted
  uint32_t maxReads_ = 1;
  size_t cqDepth_ = 0;
  uint32_t sendMask_ = 0;
  int served_ = 0;
  bool inProgress_ = false;
  CmKind cm_ = CmKind::Pmix;
  std::mt19937 rng_;  // starting PSNs
#ifdef RRT_HAVE_RDMACM
  std::unique_ptr<RdmaCm> rdmacm_;
#endif
  uint32_t slowTick_ = 0;
  int64_t nextSlowPollMs_ = 0;
  struct RepostBatch {  // buffers of one class waiting to go back to its SRQ together
    int32_t buf[kRepostBatch];
    int n = 0;
  };
  RepostBatch reposts_[kMaxEagerClasses];
};

VerbsTransport::~VerbsTransport() {
#ifdef RRT_HAVE_RDMACM
  rdmacm_.reset();  // its ids first (a connected one tells the peer), then our QPs
#endif
  regCache_.reset();  // deregisters while the PD lives
  gdr_.reset();
  for (PeerState& p : peers_)
    for (QpState& q : p.q)
      if (q.qp) ibv_destroy_qp(q.qp);
  for (ibv_srq* srq : srq_)
    if (srq) ibv_destroy_srq(srq);
  if (cq_) ibv_destroy_cq(cq_);
  if (channel_) ibv_destroy_comp_channel(channel_);
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
      kMinEagerBuf, config::sizeOr(config::Tunable::IbEagerBuf, kDefaultEagerBuf));
  const std::string& classSpec = config::value(config::Tunable::IbEagerClasses);
  const std::string& creditSpec = config::value(config::Tunable::IbCredits);
  if (parseEagerClasses(classSpec, creditSpec, eagerBuf, &classes_) != Status::Ok) {
    RRT_WARN("verbs: RRT_IB_EAGER_CLASSES=%s / RRT_IB_CREDITS=%s: want ascending sizes (at most "
             "%d, each >= %zu) and one credit count (>= %u) or one per class: using auto",
             classSpec.c_str(), creditSpec.c_str(), kMaxEagerClasses, kMinEagerBuf, kMinCredits);
    (void)parseEagerClasses("auto", "auto", eagerBuf, &classes_);
  }
  const size_t maxSrq = da.max_srq_wr > 0 ? static_cast<size_t>(da.max_srq_wr) : 0;
  if (maxSrq == 0 || da.max_srq < classes_.n) {
    RRT_WARN("verbs: %s has no SRQ support (or fewer SRQs than %d eager classes)",
             dev_.name.c_str(), classes_.n);
    return Status::ErrUnsupported;
  }

  qs_.sendDepth = static_cast<uint32_t>(roundPow2(std::min<uint64_t>(
      config::sizeOr(config::Tunable::IbTxDepth, 256), static_cast<uint64_t>(da.max_qp_wr))));
  if (qs_.sendDepth > static_cast<uint32_t>(da.max_qp_wr)) qs_.sendDepth >>= 1;
  qs_.sendDepth = std::min<uint32_t>(qs_.sendDepth, 1u << 23);  // slot index: 24 bits of wr_id
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

  // rdma_cm connects one QP per peer: with it, one class (the largest). Chosen before the SRQs.
  RRT_TRY(chooseCm());
  if (cm_ == CmKind::Rdmacm && classes_.n > 1) {
    RRT_DEBUG("verbs: rdmacm connects one QP per peer: one eager class of %u bytes",
              classes_.bufBytes[classes_.n - 1]);
    classes_.bufBytes[0] = classes_.bufBytes[classes_.n - 1];
    classes_.credits[0] = classes_.credits[classes_.n - 1];
    classes_.n = 1;
  }

  // Per class: credits never promise more than its SRQ holds, so a peer never meets an empty
  // SRQ (no RNR). Class 0 also takes the credit-only messages (kCreditSlack per peer).
  uint32_t grant = 0;
  for (int c = 0; c < classes_.n; ++c) {
    size_t depth = config::sizeOr(config::Tunable::IbSrqDepth,
                                  static_cast<uint64_t>(served_) *
                                      (classes_.credits[c] + kCreditSlack));
    depth = std::min(depth, maxSrq > kRepostBatch + 1 ? maxSrq - 1 - kRepostBatch : 0);
    const size_t perPeer = depth / static_cast<size_t>(served_);
    if (perPeer < kCreditSlack + kMinCredits) {
      RRT_WARN("verbs: SRQ of %zu buffers too small for %d peers", depth, served_);
      return Status::ErrUnsupported;
    }
    srqDepth_[c] = depth + kRepostBatch;
    classes_.credits[c] =
        static_cast<uint32_t>(std::min<size_t>(classes_.credits[c], perPeer - kCreditSlack));
    creditThreshold_[c] = std::max<uint32_t>(1, classes_.credits[c] / 2);
    grant += classes_.credits[c];
  }
  heldRing_ = static_cast<uint32_t>(roundPow2(grant));

  size_t srqTotal = 0;
  for (int c = 0; c < classes_.n; ++c) srqTotal += srqDepth_[c];
  cqDepth_ = srqTotal + static_cast<size_t>(served_) * static_cast<size_t>(classes_.n) *
                            qs_.sendDepth + 64;
  cqDepth_ = std::min<size_t>(cqDepth_, static_cast<size_t>(da.max_cqe));
  if (config::boolOr(config::Tunable::IbCompChannel, true)) {
    channel_ = ibv_create_comp_channel(dev_.ctx);
    const int fl = channel_ ? fcntl(channel_->fd, F_GETFL) : -1;
    if (fl < 0 || fcntl(channel_->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
      RRT_WARN("verbs: completion channel: %s (idle ranks yield instead)", strerror(errno));
      if (channel_) ibv_destroy_comp_channel(channel_);
      channel_ = nullptr;
    }
  }
  cq_ = ibv_create_cq(dev_.ctx, static_cast<int>(cqDepth_), nullptr, channel_, 0);
  if (!cq_) {
    RRT_WARN("verbs: ibv_create_cq(%zu): %s", cqDepth_, strerror(errno));
    return Status::ErrTransport;
  }
  for (int c = 0; c < classes_.n; ++c) {
    ibv_srq_init_attr sa{};
    sa.attr.max_wr = static_cast<uint32_t>(srqDepth_[c]);
    sa.attr.max_sge = 1;
    srq_[c] = ibv_create_srq(dev_.pd, &sa);
    if (!srq_[c]) {
      RRT_WARN("verbs: ibv_create_srq(%zu): %s", srqDepth_[c], strerror(errno));
      return Status::ErrTransport;
    }
    RRT_TRY(recvPool_[c].init(dev_.pd, srqDepth_[c], classes_.bufBytes[c]));
    for (size_t i = 0; i < srqDepth_[c]; ++i) repost(c, recvPool_[c].take());
    flushReposts(c);
  }
  const size_t sendBufs = config::sizeOr(config::Tunable::IbSendBufs, kDefaultSendBufs);
  RRT_TRY(sendPool_.init(dev_.pd, std::max<size_t>(1, sendBufs),
                         classes_.bufBytes[classes_.n - 1]));

  peers_.resize(static_cast<size_t>(ctx_.size));
  rng_.seed(static_cast<uint32_t>(getpid()) * 2654435761u ^ static_cast<uint32_t>(ctx_.rank));
  if (cm_ == CmKind::Pmix)  // every QP now, connected at start(); rdmacm makes them on first use
    for (int w = 0; w < ctx_.size; ++w)
      if (serves(w)) RRT_TRY(newQp(w));
  creditDue_.reserve(peers_.size());

  memory::RegCache::Limits lim;
  lim.enabled = config::boolOr(config::Tunable::IbRegCache, true);
  lim.maxBytes = config::sizeOr(config::Tunable::IbRegCacheBytes, size_t{1} << 30);
  lim.maxEntries = std::max<uint64_t>(1, config::sizeOr(config::Tunable::IbRegCacheEntries, 1024));
  regCache_ = std::make_unique<memory::RegCache>(this, lim);
  gdr_ = std::make_unique<GdrRegistrations>();
  gdr_->init(dev_.pd, lim.maxEntries);

  const uint64_t maxMsg = dev_.portAttr.max_msg_sz ? dev_.portAttr.max_msg_sz : (1ull << 31);
  caps_.flags = kAmBcopy | kGetZcopy | kPutZcopy | kOrdered | kNeedsReg | kPutDelivered |
                (channel_ ? kEventFd : 0u);
  caps_.maxAm = classes_.bufBytes[classes_.n - 1] - sizeof(AmHeader);
  caps_.minZcopy = 0;
  caps_.maxZcopy = std::min<uint64_t>(
      maxMsg, config::sizeOr(config::Tunable::IbMaxZcopy, kDefaultMaxZcopy));
  caps_.maxZcopy = std::max<size_t>(caps_.maxZcopy, 4096);
  caps_.zcopyMemTypes = memory::memTypeBit(MemType::Host) |
                        (gdr_->on() ? memory::memTypeBit(MemType::Cuda) : 0u);
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

// The QPs (INIT) for peer w, one per class on the CQ and that class's SRQ, with their send
// slots; credits come with the peer's address (setPeerClasses).
Status VerbsTransport::newQp(int w) {
  PeerState& p = peers_[static_cast<size_t>(w)];
  if (p.q[0].qp) return Status::Ok;
  for (int c = 0; c < classes_.n; ++c) {
    QpState& q = p.q[c];
    uint32_t inl = 0;
    RRT_TRY(createRcQp(dev_, cq_, srq_[c], qs_, &q.qp, &inl));
    maxInline_ = std::min(maxInline_, inl);
    q.psn = rng_() & 0xffffff;
    q.sqFree = qs_.sendDepth;
    q.slots.resize(qs_.sendDepth);
    qpnToPeer_[q.qp->qp_num] = w;
  }
  p.held.assign(heldRing_, Held{});
  return Status::Ok;
}

// The peer's receive classes: the buffer sizes we choose from and the credits it grants us.
void VerbsTransport::setPeerClasses(PeerState& p, const EagerClasses& c) {
  if (p.classesKnown) return;
  p.classesKnown = true;
  for (int i = 0; i < classes_.n; ++i) {
    p.peerBuf[i] = c.bufBytes[i];
    p.credits[i] = c.credits[i];
    p.maxCredits[i] = c.credits[i];
  }
}

#ifdef RRT_HAVE_RDMACM
Status VerbsTransport::cmQp(int peer, ibv_qp** qp) {
  if (static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size) || !serves(peer))
    return Status::ErrRank;
  if (peers_[static_cast<size_t>(peer)].failed) return Status::ErrProcFailed;
  RRT_TRY(newQp(peer));
  *qp = peers_[static_cast<size_t>(peer)].q[0].qp;
  return Status::Ok;
}

void VerbsTransport::cmEstablished(int peer) {
  PeerState& p = peers_[static_cast<size_t>(peer)];
  if (!p.failed && p.q[0].qp) p.connected = true;  // the engine retries its queued sends from progress
}
#endif

std::string VerbsTransport::describe() const {
  // Eager classes: "srq=<buffers> x <bytes>B credits=<per peer>" each, and the registered
  // bounce memory they take (receive pools + the send pool).
  std::string cls;
  size_t bounce = sendPool_.count() * sendPool_.bufBytes();
  for (int c = 0; c < classes_.n; ++c) {
    char one[96];
    snprintf(one, sizeof one, "%s%zu x %uB credits=%u", c ? ", " : "", srqDepth_[c],
             classes_.bufBytes[c], classes_.credits[c]);
    cls += one;
    bounce += srqDepth_[c] * classes_.bufBytes[c];
  }
  char buf[768];
  snprintf(buf, sizeof buf,
           "device=%s port=%u link=%s lid=%u gid_index=%d mtu=%s peers=%d qps=%d eager_classes=[%s] "
           "send_bufs=%zu x %zuB bounce_memory=%.1fKiB tx_depth=%u inline=%s max_rd=%u cq=%zu "
           "reg_cache=%s gdr=%s cm=%s",
           dev_.name.c_str(), dev_.port, dev_.roce ? "ethernet(RoCE)" : "infiniband",
           dev_.portAttr.lid, dev_.gidIndex, mtuName(dev_.portAttr.active_mtu), served_,
           served_ * classes_.n, cls.c_str(), sendPool_.count(), sendPool_.bufBytes(),
           static_cast<double>(bounce) / 1024.0, qs_.sendDepth,
           maxInline_ == ~0u ? "(no QP yet)" : std::to_string(maxInline_).c_str(), maxReads_, cqDepth_,
           config::boolOr(config::Tunable::IbRegCache, true) ? "on" : "off", gdr_->describe(),
           cmName().c_str());
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
    packAddress(h, classes_, {}, &rdmacm_->endpoint(), blob);
    return Status::Ok;
  }
#endif
  const size_t n = static_cast<size_t>(classes_.n);
  std::vector<QpSlot> slots(static_cast<size_t>(ctx_.size) * n);
  for (int w = 0; w < ctx_.size; ++w) {
    const PeerState& p = peers_[static_cast<size_t>(w)];
    for (size_t c = 0; c < n; ++c)
      slots[static_cast<size_t>(w) * n + c] = QpSlot{p.q[c].qp ? p.q[c].qp->qp_num : 0, p.q[c].psn};
  }
  packAddress(h, classes_, slots, nullptr, blob);
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
  // Both sides pair class c with class c; the largest must hold our largest active message.
  if (out->classes.n != classes_.n ||
      out->classes.bufBytes[out->classes.n - 1] < classes_.bufBytes[classes_.n - 1]) {
    RRT_WARN("verbs: rank %d has %d eager classes up to %u bytes, this rank %d up to %u (set "
             "RRT_IB_EAGER_CLASSES alike)", peer, out->classes.n,
             out->classes.bufBytes[out->classes.n - 1], classes_.n,
             classes_.bufBytes[classes_.n - 1]);
    return Status::ErrWireup;
  }
  return Status::Ok;
}

Status VerbsTransport::start() {
  if (cm_ != CmKind::Pmix) return Status::Ok;
  for (int w = 0; w < ctx_.size; ++w) {
    PeerState& p = peers_[static_cast<size_t>(w)];
    if (!p.q[0].qp) continue;
    std::vector<uint8_t> blob;
    PeerAddress a;
    Status st = ctx_.lookup ? ctx_.lookup(w, "rrt.verbs", &blob) : Status::ErrWireup;
    if (st == Status::Ok) st = parsePeer(w, blob.data(), blob.size(), &a);
    for (int c = 0; c < classes_.n && st == Status::Ok; ++c) {
      QpAddress qa = a.qp;
      qa.qpn = a.qpn[c];
      qa.psn = a.psn[c];
      st = connectRcQp(dev_, p.q[c].qp, qs_, qa, p.q[c].psn);
    }
    if (st == Status::Ok) setPeerClasses(p, a.classes);
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
  setPeerClasses(peers_[static_cast<size_t>(peer)], a.classes);
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

Status VerbsTransport::post(int peer, int cls, ibv_send_wr& wr, const TxSlot& slot) {
  QpState& q = peers_[static_cast<size_t>(peer)].q[cls];
  const uint32_t idx = static_cast<uint32_t>(q.head) & sendMask_;
  const bool signal = slot.done || slot.buf >= 0 || q.unsignaled + 1 >= kSignalEvery ||
                      q.sqFree <= kSignalEvery;
  wr.wr_id = (static_cast<uint64_t>(static_cast<uint32_t>(peer)) << 32) |
             (static_cast<uint64_t>(cls) << 24) | idx;
  wr.next = nullptr;
  if (signal) wr.send_flags |= IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(q.qp, &wr, &bad)) {
    if (rc == ENOMEM) return Status::NoResource;
    RRT_WARN("verbs: ibv_post_send to rank %d: %s", peer, strerror(rc));
    return Status::ErrTransport;
  }
  q.slots[idx] = slot;
  ++q.head;
  --q.sqFree;
  q.unsignaled = signal ? 0 : q.unsignaled + 1;
  return Status::Ok;
}

Status VerbsTransport::amSend(int peer, AmId id, const void* hdr, size_t hdrLen,
                              const void* payload, size_t len) {
  if (__builtin_expect(static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size), 0))
    return Status::ErrRank;
  PeerState& p = peers_[static_cast<size_t>(peer)];
  if (__builtin_expect(!p.connected || p.failed || !p.classesKnown, 0))  // rdmacm: handshake
    return p.failed ? Status::ErrProcFailed : cm_ == CmKind::Rdmacm ? Status::NoResource : Status::ErrRank;
  const size_t total = sizeof(AmHeader) + hdrLen + len;
  if (__builtin_expect(total - sizeof(AmHeader) > caps_.maxAm || id == kCreditOnly, 0))
    return Status::ErrArg;
  const int c = pickEagerClass(p.peerBuf, p.credits, classes_.n, total);
  if (c < 0) return c == kClassTooBig ? Status::ErrArg : Status::NoResource;
  // One send slot of each QP stays free for credit messages.
  if (p.q[c].sqFree <= 1) return Status::NoResource;

  // Piggy-back the credits of the class we owe most.
  int cc = 0;
  for (int i = 1; i < classes_.n; ++i)
    if (p.owed[i] > p.owed[cc]) cc = i;
  AmHeader h{id, static_cast<uint8_t>(cc), static_cast<uint16_t>(std::min<uint32_t>(p.owed[cc], 0xffff)),
             p.txSeq};
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
  Status st = post(peer, c, wr, slot);
  if (st != Status::Ok) {
    if (slot.buf >= 0) sendPool_.give(slot.buf);
    return st;
  }
  --p.credits[c];
  p.owed[cc] -= h.credits;
  ++p.txSeq;
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
  const int c = rdmaClass();
  if (p.q[c].sqFree <= 1 || (read && p.readsOut >= maxReads_)) return Status::NoResource;
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
  Status st = post(peer, c, wr, slot);
  if (st != Status::Ok) return st;
  if (read) ++p.readsOut;
  return Status::InProgress;
}

// Everything owed, every class, in one credit-only SEND on the class-0 QP (it lands in one of
// the kCreditSlack buffers per peer of the peer's class-0 SRQ, so it needs no credit).
void VerbsTransport::sendCredits(int peer, PeerState& p) {
  QpState& q = p.q[0];
  if (p.failed || !p.connected || q.sqFree == 0) return;
  struct {
    AmHeader h;
    uint16_t n[kMaxEagerClasses];
  } __attribute__((packed)) m{};
  bool any = false;
  for (int c = 0; c < classes_.n; ++c) {
    m.n[c] = static_cast<uint16_t>(std::min<uint32_t>(p.owed[c], 0xffff));
    any |= m.n[c] != 0;
  }
  if (!any) return;
  m.h.id = kCreditOnly;
  const uint32_t bytes = static_cast<uint32_t>(sizeof m.h + sizeof(uint16_t) * classes_.n);
  ibv_sge sge;
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  TxSlot slot;
  if (maxInline_ >= bytes) {
    sge = {reinterpret_cast<uintptr_t>(&m), bytes, 0};
    wr.send_flags = IBV_SEND_INLINE;
  } else {
    slot.buf = sendPool_.take();
    if (slot.buf < 0) return;  // retried at the next progress()
    memcpy(sendPool_.at(slot.buf), &m, bytes);
    sge = {reinterpret_cast<uintptr_t>(sendPool_.at(slot.buf)), bytes, sendPool_.lkey()};
  }
  if (post(peer, 0, wr, slot) != Status::Ok) {
    if (slot.buf >= 0) sendPool_.give(slot.buf);
    return;
  }
  for (int c = 0; c < classes_.n; ++c) p.owed[c] -= m.n[c];
}

void VerbsTransport::repost(int cls, int32_t buf) {
  RepostBatch& b = reposts_[cls];
  b.buf[b.n++] = buf;
  if (b.n == kRepostBatch) flushReposts(cls);
}

void VerbsTransport::flushReposts(int cls) {
  RepostBatch& b = reposts_[cls];
  if (b.n == 0) return;
  BouncePool& pool = recvPool_[cls];
  ibv_sge sge[kRepostBatch];
  ibv_recv_wr wr[kRepostBatch];
  for (int i = 0; i < b.n; ++i) {
    sge[i] = {reinterpret_cast<uintptr_t>(pool.at(b.buf[i])),
              static_cast<uint32_t>(pool.bufBytes()), pool.lkey()};
    wr[i] = ibv_recv_wr{};
    wr[i].wr_id = kRecvBit | (static_cast<uint64_t>(cls) << 32) | static_cast<uint32_t>(b.buf[i]);
    wr[i].sg_list = &sge[i];
    wr[i].num_sge = 1;
    wr[i].next = i + 1 < b.n ? &wr[i + 1] : nullptr;
  }
  b.n = 0;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_srq_recv(srq_[cls], wr, &bad)) {
    RRT_ERROR("verbs: re-posting receive buffers: %s", strerror(rc));
    for (ibv_recv_wr* w = bad; w; w = w->next)  // from the first not posted on
      pool.give(static_cast<int32_t>(w->wr_id & 0xffffffffu));
  }
}

void VerbsTransport::retireUpTo(PeerState& p, QpState& q, uint32_t idx) {
  for (;;) {
    const uint32_t i = static_cast<uint32_t>(q.tail) & sendMask_;
    if (q.tail == q.head) return;  // already retired (e.g. by failPeer)
    TxSlot s = q.slots[i];
    q.slots[i] = TxSlot{};
    ++q.tail;
    ++q.sqFree;
    if (s.buf >= 0) sendPool_.give(s.buf);
    if (s.read) --p.readsOut;
    if (s.done) s.done->fn(s.done, Status::Ok);
    if (i == idx) return;
  }
}

void VerbsTransport::takeCredits(int src, PeerState& p, int cls, uint32_t n) {
  if (n == 0 || cls >= classes_.n) return;
  p.credits[cls] += n;
  if (p.credits[cls] > p.maxCredits[cls]) {
    RRT_WARN("verbs: rank %d returned more class-%d credits than it had (%u)", src, cls,
             p.credits[cls]);
    p.credits[cls] = p.maxCredits[cls];
  }
}

// Hands one in-sequence message to the protocol and gives its buffer back to the SRQ.
void VerbsTransport::deliver(int src, PeerState& p, int cls, int32_t buf, uint32_t len) {
  const char* data = recvPool_[cls].at(buf);
  ++p.rxSeq;
  if (ctx_.amHandler)
    ctx_.amHandler(ctx_.handlerArg, src, data[0], data + sizeof(AmHeader), len - sizeof(AmHeader));
  repost(cls, buf);
  ++p.owed[cls];
  if (p.owed[cls] >= creditThreshold_[cls] && !p.creditDue) {
    p.creditDue = true;
    creditDue_.push_back(src);
  }
}

void VerbsTransport::onRecv(const ibv_wc& wc) {
  const int cls = static_cast<int>((wc.wr_id >> 32) & 0xff);
  const int32_t buf = static_cast<int32_t>(wc.wr_id & 0xffffffffu);
  auto it = qpnToPeer_.find(wc.qp_num);
  if (it == qpnToPeer_.end()) {
    RRT_WARN("verbs: receive on unknown QP %u dropped", wc.qp_num);
    repost(cls, buf);
    return;
  }
  const int src = it->second;
  PeerState& p = peers_[static_cast<size_t>(src)];
  const char* data = recvPool_[cls].at(buf);
  AmHeader h;
  if (wc.byte_len < sizeof h) {
    RRT_WARN("verbs: %u-byte message from rank %d dropped", wc.byte_len, src);
    repost(cls, buf);
    return;
  }
  memcpy(&h, data, sizeof h);
  takeCredits(src, p, h.creditClass, h.credits);
  if (h.id == kCreditOnly) {
    const uint32_t n = std::min<uint32_t>((wc.byte_len - sizeof h) / sizeof(uint16_t),
                                          static_cast<uint32_t>(classes_.n));
    for (uint32_t c = 0; c < n; ++c) {
      uint16_t v;
      memcpy(&v, data + sizeof h + c * sizeof v, sizeof v);
      takeCredits(src, p, static_cast<int>(c), v);
    }
    repost(cls, buf);
    return;
  }
  if (__builtin_expect(h.seq == p.rxSeq, 1)) {
    deliver(src, p, cls, buf, wc.byte_len);
  } else {
    // Ahead of one still on another class's QP: keep it until that one comes. Never more
    // than the credits we grant can be outstanding, which sizes the ring.
    const uint32_t ahead = h.seq - p.rxSeq;
    Held& slot = p.held[h.seq & (heldRing_ - 1)];
    if (ahead >= heldRing_ || slot.buf >= 0) {
      RRT_ERROR("verbs: message %u from rank %d while expecting %u: beyond its credits", h.seq,
                src, p.rxSeq);
      repost(cls, buf);
      failPeer(src, Status::ErrTransport);
      return;
    }
    slot = Held{buf, static_cast<uint8_t>(cls), wc.byte_len};
    ++p.heldCount;
    return;
  }
  while (p.heldCount) {
    Held& next = p.held[p.rxSeq & (heldRing_ - 1)];
    if (next.buf < 0) break;
    const Held m = next;
    next = Held{};
    --p.heldCount;
    deliver(src, p, m.cls, m.buf, m.len);
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
        if (peers_[static_cast<size_t>(w)].q[0].qp) failPeer(w, Status::ErrTransport);
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
  for (QpState& q : p.q) {
    if (!q.qp) continue;
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_ERR;
    (void)ibv_modify_qp(q.qp, &a, IBV_QP_STATE);
    while (q.tail != q.head) {
      const uint32_t i = static_cast<uint32_t>(q.tail) & sendMask_;
      TxSlot s = q.slots[i];
      q.slots[i] = TxSlot{};
      ++q.tail;
      ++q.sqFree;
      if (s.buf >= 0) sendPool_.give(s.buf);
      if (s.done) s.done->fn(s.done, why);
    }
  }
  for (Held& h : p.held) {  // messages that will never be in sequence now
    if (h.buf >= 0) repost(h.cls, h.buf);
    h = Held{};
  }
  p.heldCount = 0;
  p.readsOut = 0;
  if (ctx_.peerFailed) ctx_.peerFailed(ctx_.handlerArg, peer, why);
}

// Reads the completion channel's events (non-blocking) and acknowledges them; the CQ is
// disarmed once its event is read. A system call: only in the sleep path and on the first
// completion after an arm, never while the CQ is not armed.
void VerbsTransport::drainChannel() {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(channel_, &cq, &ctx) == 0) {
    ibv_ack_cq_events(cq, 1);
    armed_ = false;
  }
}

// Before the engine sleeps on the channel fd: arm the CQ (the next completion writes an
// event), then poll once more, so a completion that came before the arm is not slept through.
bool VerbsTransport::armEventFd() {
  if (!channel_) return false;
  drainChannel();  // an event from an earlier arm would wake the poll() at once
  if (!armed_) {
    if (ibv_req_notify_cq(cq_, 0) != 0) return false;
    armed_ = true;
  }
  return progress() == 0;
}

int VerbsTransport::progress() {
  if (inProgress_) return 0;
  inProgress_ = true;
  int events = 0;
#ifdef RRT_HAVE_RDMACM
  // rdma_cm and async events cost a system call to look for: rdma_cm at every call while a
  // handshake is under way; both at most every kSlowPollMs (incoming requests,
  // disconnections, a QP the peer's error moved to ERR).
  if (rdmacm_ && rdmacm_->busy()) events += rdmacm_->poll();
#endif
  if (__builtin_expect(++slowTick_ % kSlowPollEvery == 0, 0)) {
    const int64_t ms = coarseMs();  // vDSO: no system call
    if (ms >= nextSlowPollMs_) {
      nextSlowPollMs_ = ms + kSlowPollMs;
      events += pollSlow();
    }
  }
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
          repost(static_cast<int>((c.wr_id >> 32) & 0xff), buf);
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
      const int cls = static_cast<int>((c.wr_id >> 24) & 0xff);
      if (cls >= classes_.n) continue;
      retireUpTo(p, p.q[cls], static_cast<uint32_t>(c.wr_id & 0xffffffu));
    }
    events += n;
    if (__builtin_expect(armed_ && n > 0, 0)) drainChannel();
  } while (n == kPollBatch);
  for (size_t i = 0; i < creditDue_.size(); ++i) {
    PeerState& p = peers_[static_cast<size_t>(creditDue_[i])];
    p.creditDue = false;
    auto due = [this, &p] {
      for (int c = 0; c < classes_.n; ++c)
        if (p.owed[c] >= creditThreshold_[c]) return true;
      return false;
    };
    if (due()) sendCredits(creditDue_[i], p);
    if (due() && !p.failed) {  // no send slot now: keep it due
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
  if (type == MemType::Cuda) {
    VerbsMr* v = nullptr;
    Status st = gdr_->get(addr, len, &v);
    if (!gdr_->on()) caps_.zcopyMemTypes &= ~memory::memTypeBit(MemType::Cuda);  // refused
    if (st == Status::Ok) *out = v;
    return st;
  }
  if (type != MemType::Host) return Status::ErrUnsupported;
  memory::RegEntry* e = nullptr;
  RRT_TRY(regCache_->get(addr, len, &e));
  auto* v = static_cast<VerbsMr*>(e->handle);
  v->entry = e;
  *out = v;
  return Status::Ok;
}

void VerbsTransport::memDereg(MemHandle* mh) {
  auto* v = static_cast<VerbsMr*>(mh);
  if (!v) return;
  if (v->device) {
    gdr_->put(v);
  } else {
    regCache_->put(v->entry);
  }
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
