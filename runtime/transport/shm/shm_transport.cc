#include "runtime/transport/shm/shm_transport.h"

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/transport/shm/address.h"
#include "runtime/transport/shm/cma.h"
#include "runtime/transport/shm/ring.h"
#include "runtime/transport/shm/segment.h"

namespace rrt::transport::shm {
namespace {

constexpr size_t kDefaultRingBytes = size_t{256} << 10;
constexpr size_t kAutoSegmentBudget = size_t{256} << 20;  // default rings shrink to fit this
constexpr size_t kAutoMinRingBytes = size_t{64} << 10;
constexpr int kBatchPerRing = 32;             // records delivered per peer per progress()
constexpr double kLivenessCheckSeconds = 0.01;  // while a ring stays full, look at its peer this often
constexpr size_t kMaxZcopy = size_t{1} << 30;    // one synchronous CMA call stays under ~0.1 s
constexpr size_t kMinZcopy = size_t{256} << 10;  // below it copies through the ring are faster

size_t roundUpPow2(size_t v) {
  size_t p = kMinRingBytes;
  while (p < v && p < kMaxRingBytes) p <<= 1;
  return p;
}

// Per-pair ring bytes: the user's value, or the default shrunk for crowded nodes (the segment
// holds n * (n - 1) rings).
size_t chooseRingBytes(int localSize) {
  const uint64_t asked = config::sizeOr(config::Tunable::ShmRingBytes, kDefaultRingBytes);
  if (config::fromEnvironment(config::Tunable::ShmRingBytes)) {
    const size_t r = roundUpPow2(static_cast<size_t>(std::min<uint64_t>(asked, kMaxRingBytes)));
    if (r != asked) RRT_INFO("shm: ring size %llu rounded to %zu", (unsigned long long)asked, r);
    return r;
  }
  size_t r = roundUpPow2(static_cast<size_t>(asked));
  const size_t pairs = static_cast<size_t>(localSize) * (localSize - 1);
  while (r > kAutoMinRingBytes && pairs * r > kAutoSegmentBudget) r >>= 1;
  return r;
}

// Largest AM: an eighth of the ring, at least 16 KiB while the ring allows (a record may use at
// most half of it; see RingProducer::capacity()).
size_t chooseMaxAm(size_t ringBytes) {
  size_t m = std::max(ringBytes / 8, std::min<size_t>(16 << 10, ringBytes / 4));
  return std::min(m, ringBytes / 2 - kRecordHeaderBytes);
}

struct Peer {
  RingProducer tx;      // this rank -> peer
  int worldRank = -1;
  int localIndex = -1;
  pid_t pid = 0;        // from the peer's address blob (connect)
  bool connected = false;
  bool dead = false;
  bool cmaDenied = false;
  uint32_t fullStreak = 0;  // consecutive NoResource answers
  double lastCheck = 0;     // when the peer's liveness was last looked at (ring full)
};

struct Inbox {
  RingConsumer rx;      // peer -> this rank
  int src = -1;         // world rank of the producer
  bool broken = false;  // held a record that cannot be valid: no longer polled
};

class ShmTransport final : public Transport {
 public:
  explicit ShmTransport(const Context& ctx) : ctx_(ctx) {}

  ~ShmTransport() override {
    // A creator that never got to start() is on an error path before the fence; remove the
    // name it made (siblings fail their attach and fall back).
    if (creator_ && !started_ && segment_.mapped()) shm_unlink(name_.c_str());
  }

  Status init();

  const char* name() const override { return "shm"; }
  const Caps& caps() const override { return caps_; }

  Status address(std::vector<uint8_t>* blob) override;
  Status start() override;
  bool reachable(int peer) const override {
    return peer != ctx_.rank && peer >= 0 && peer < ctx_.size && localIndexOf_[peer] >= 0;
  }
  Status connect(int peer, const void* blob, size_t len) override;

  Status amSend(int peer, AmId id, const void* hdr, size_t hdrLen, const void* payload,
                size_t len) override {
    if (static_cast<unsigned>(peer) >= static_cast<unsigned>(ctx_.size)) return Status::ErrRank;
    Peer* p = peerByRank_[peer];
    if (__builtin_expect(p == nullptr, 0)) return Status::ErrRank;  // not local, self, or not started
    if (__builtin_expect(hdrLen + len > caps_.maxAm, 0)) return Status::ErrArg;
    if (__builtin_expect(p->dead, 0)) return Status::ErrProcFailed;
    if (__builtin_expect(p->tx.push(id, hdr, hdrLen, payload, len) == Status::Ok, 1)) {
      p->fullStreak = 0;
      return Status::Ok;
    }
    return ringFull(p);
  }

  Status get(int peer, void* local, size_t len, MemHandle* localMh, uint64_t remoteAddr,
             const void* rkey, size_t rkeyLen, Completion* done) override {
    Peer* p = nullptr;
    Status st = cmaPeer(peer, &p);
    if (!ok(st) || len == 0) return st;
    return cmaResult(p, cmaRead(p->pid, local, remoteAddr, len));
  }

  Status put(int peer, const void* local, size_t len, MemHandle* localMh, uint64_t remoteAddr,
             const void* rkey, size_t rkeyLen, Completion* done) override {
    Peer* p = nullptr;
    Status st = cmaPeer(peer, &p);
    if (!ok(st) || len == 0) return st;
    return cmaResult(p, cmaWrite(p->pid, local, remoteAddr, len));
  }

  int progress() override {
    if (polling_) return 0;
    polling_ = true;
    int events = 0;
    for (Inbox& in : inboxes_) {
      if (!in.rx.ready()) {
        in.rx.idle();  // hands consumed cells back now that nothing is waiting
        continue;
      }
      if (__builtin_expect(in.broken, 0)) continue;
      const int n = in.rx.drain(kBatchPerRing, [this, &in](uint8_t id, const void* d, size_t len) {
        ctx_.amHandler(ctx_.handlerArg, in.src, id, d, len);
      });
      if (__builtin_expect(n < 0, 0)) {
        brokenRing(in);
        continue;
      }
      events += n;
    }
    polling_ = false;
    return events;
  }

  void disconnect(int peer) override {
    if (peer >= 0 && peer < ctx_.size && localIndexOf_[peer] >= 0 && peer != ctx_.rank)
      peers_[localIndexOf_[peer]].dead = true;
  }

 private:
  Status ringFull(Peer* p);
  Status cmaPeer(int peer, Peer** out);
  Status cmaResult(Peer* p, Status st);
  void markDead(Peer* p, Status why);
  void brokenRing(Inbox& in);

  Context ctx_;
  Caps caps_;
  std::string name_;
  int localSize_ = 0;
  int me_ = -1;  // local index
  size_t ringBytes_ = 0;
  bool creator_ = false;
  bool started_ = false;
  bool cma_ = false;
  bool polling_ = false;
  Segment segment_;
  std::vector<int> localIndexOf_;   // by world rank, -1 when not on this node
  std::vector<Peer> peers_;         // by local index (own entry unused)
  std::vector<Peer*> peerByRank_;   // by world rank; set by start() for local peers but self
  std::vector<Inbox> inboxes_;      // one per other local rank, polled by progress()
};

Status ShmTransport::init() {
  localSize_ = static_cast<int>(ctx_.localPeers.size());
  localIndexOf_.assign(ctx_.size, -1);
  for (int i = 0; i < localSize_; ++i) {
    const int r = ctx_.localPeers[i];
    if (r < 0 || r >= ctx_.size || (i > 0 && r <= ctx_.localPeers[i - 1])) {
      RRT_ERROR("shm: localPeers must be ascending world ranks");
      return Status::ErrArg;
    }
    localIndexOf_[r] = i;
  }
  if (ctx_.rank < 0 || ctx_.rank >= ctx_.size || localIndexOf_[ctx_.rank] < 0 ||
      ctx_.amHandler == nullptr || ctx_.jobId.empty())
    return Status::ErrArg;
  me_ = localIndexOf_[ctx_.rank];
  if (localSize_ < 2) return Status::ErrUnsupported;  // nobody to serve
  peers_.resize(localSize_);
  for (int i = 0; i < localSize_; ++i) {
    peers_[i].worldRank = ctx_.localPeers[i];
    peers_[i].localIndex = i;
  }
  peerByRank_.assign(ctx_.size, nullptr);

  ringBytes_ = chooseRingBytes(localSize_);
  name_ = segmentName(ctx_.jobId, ctx_.localPeers[0]);

  // CMA: off, on (warn when it cannot work), auto (use it when it can).
  const bool cmaWanted = config::boolOr(config::Tunable::ShmCma, true);
  if (cmaWanted) {
    cma_ = cmaAvailable();
    if (!cma_ && !config::isAuto(config::Tunable::ShmCma))
      RRT_WARN("shm: RRT_SHM_CMA=on but CMA is not available (ptrace restrictions?)");
    if (cma_) allowPeersToRead();
  }

  // Numbers measured on the 2-vCPU development VM (tests/unit/shm_transport_test.cc,
  // RRT_SHM_BENCH=1): 8-byte AM one-way 0.08-0.35 us depending on vCPU placement; a transfer
  // by ring copies beats a CMA get up to 256 KiB in every placement (copies win everywhere when
  // the vCPUs share a cache), so CMA is only worth it from there; CMA get 16-20 GB/s at 4 MiB.
  caps_.flags = kAmBcopy | kOrdered | (cma_ ? (kGetZcopy | kPutZcopy) : 0u);
  caps_.maxAm = chooseMaxAm(ringBytes_);
  caps_.minZcopy = cma_ ? kMinZcopy : 0;
  caps_.maxZcopy = cma_ ? kMaxZcopy : 0;
  caps_.zcopyMemTypes = cma_ ? memory::memTypeBit(MemType::Host) : 0;
  caps_.latencyUs = 0.2;
  caps_.bandwidthMBs = cma_ ? 16000 : 20000;
  caps_.eagerDefault = std::min<size_t>(16 << 10, caps_.maxAm / 2);

  creator_ = me_ == 0;
  if (creator_) RRT_TRY(segment_.create(name_, localSize_, ringBytes_));
  return Status::Ok;
}

Status ShmTransport::address(std::vector<uint8_t>* blob) {
  AddressBlob a;
  memset(&a, 0, sizeof a);
  a.magic = kAddressMagic;
  a.version = kAddressVersion;
  a.localIndex = static_cast<uint16_t>(me_);
  a.worldRank = ctx_.rank;
  a.pid = static_cast<int32_t>(getpid());
  a.localSize = static_cast<uint32_t>(localSize_);
  a.ringBytes = static_cast<uint32_t>(ringBytes_);
  blob->resize(sizeof a);
  memcpy(blob->data(), &a, sizeof a);
  return Status::Ok;
}

Status ShmTransport::start() {
  if (started_) return Status::Ok;
  if (!creator_) {
    RRT_TRY(segment_.attach(name_, localSize_, ringBytes_));
    if (segment_.countAttached(name_)) RRT_DEBUG("shm: all %d ranks attached; unlinked %s",
                                                 localSize_, name_.c_str());
  }
  segment_.prefaultRings(me_);
  inboxes_.reserve(localSize_ - 1);
  for (int j = 0; j < localSize_; ++j) {
    if (j == me_) continue;
    peers_[j].tx = RingProducer(segment_.ring(me_, j), ringBytes_);
    Inbox in;
    in.rx = RingConsumer(segment_.ring(j, me_), ringBytes_);
    in.src = ctx_.localPeers[j];
    inboxes_.push_back(in);
    peerByRank_[ctx_.localPeers[j]] = &peers_[j];
  }
  started_ = true;
  return Status::Ok;
}

Status ShmTransport::connect(int peer, const void* blob, size_t len) {
  if (!reachable(peer)) return Status::ErrRank;
  Peer& p = peers_[localIndexOf_[peer]];
  AddressBlob a;
  Status st = parseAddress(blob, len, peer, p.localIndex, localSize_, ringBytes_, &a);
  if (!ok(st)) {
    RRT_WARN("shm: malformed address blob from rank %d (%zu bytes)", peer, len);
    return st;
  }
  p.pid = a.pid;
  p.connected = true;
  return Status::Ok;
}

Status ShmTransport::ringFull(Peer* p) {
  // Slow path. A ring that stays full may belong to a dead peer: look (one kill() and a read
  // of /proc) every kLivenessCheckSeconds while it stays full; the first retries are free.
  if (++p->fullStreak < 64 || p->pid <= 0) return Status::NoResource;
  const double t = core::now();
  if (t - p->lastCheck < kLivenessCheckSeconds) return Status::NoResource;
  p->lastCheck = t;
  if (!processAlive(p->pid)) {
    markDead(p, Status::ErrProcFailed);
    return Status::ErrProcFailed;
  }
  return Status::NoResource;
}

Status ShmTransport::cmaPeer(int peer, Peer** out) {
  if (!cma_) return Status::ErrUnsupported;
  if (!reachable(peer)) return Status::ErrRank;
  Peer* p = &peers_[localIndexOf_[peer]];
  if (!p->connected) return Status::ErrArg;
  if (p->dead) return Status::ErrProcFailed;
  if (p->cmaDenied) return Status::ErrUnsupported;
  *out = p;
  return Status::Ok;
}

Status ShmTransport::cmaResult(Peer* p, Status st) {
  if (__builtin_expect(ok(st), 1)) return st;
  if (st == Status::ErrUnsupported) {
    RRT_INFO("shm: CMA to rank %d refused; using copies through the ring", p->worldRank);
    p->cmaDenied = true;
  } else if (st == Status::ErrProcFailed) {
    markDead(p, st);
  } else {
    RRT_WARN("shm: CMA with rank %d failed: %s", p->worldRank, statusName(st));
  }
  return st;
}

void ShmTransport::markDead(Peer* p, Status why) {
  if (p->dead) return;
  p->dead = true;
  RRT_WARN("shm: rank %d (pid %d) is gone", p->worldRank, static_cast<int>(p->pid));
  if (ctx_.peerFailed) ctx_.peerFailed(ctx_.handlerArg, p->worldRank, why);
}

void ShmTransport::brokenRing(Inbox& in) {
  in.broken = true;
  RRT_ERROR("shm: the ring from rank %d holds an invalid record; ignoring that rank", in.src);
  Peer* p = &peers_[localIndexOf_[in.src]];
  if (!p->dead) {
    p->dead = true;
    if (ctx_.peerFailed) ctx_.peerFailed(ctx_.handlerArg, in.src, Status::ErrTransport);
  }
}

}  // namespace

TransportPtr create(const Context& ctx, Status* st) {
  auto t = std::make_unique<ShmTransport>(ctx);
  *st = t->init();
  if (!ok(*st)) return nullptr;
  return t;
}

}  // namespace rrt::transport::shm
