#include "runtime/transport/shm/shm_transport.h"

#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/core/process.h"
#include "runtime/core/progress.h"
#include "runtime/transport/shm/address.h"
#include "runtime/transport/shm/cma.h"
#include "runtime/transport/shm/cma_split.h"
#include "runtime/transport/shm/copy_path.h"
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
constexpr uintptr_t kPage = 4096;  // the split point: a page boundary of the destination

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
  SplitSlot* asks = nullptr;        // our table of split requests to this peer (cma_split.h)
  SplitSlot* served = nullptr;      // the peer's table of requests to us
  Completion* waiting[kSplitSlots] = {};  // per slot: the get that waits for the peer's tail
  Status headStatus[kSplitSlots] = {};    // per slot: how our read of that get's head went
  int inFlight = 0;                 // slots with a waiting get
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
    if (__builtin_expect(hdrLen + len > caps_.maxAm || id >= kTransportAmIds, 0)) return Status::ErrArg;
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
    if (len >= splitMin_ && done) return splitCopy(p, local, len, remoteAddr, done, kSplitGet);
    return cmaResult(p, cmaRead(p->pid, local, remoteAddr, len));
  }

  Status put(int peer, const void* local, size_t len, MemHandle* localMh, uint64_t remoteAddr,
             const void* rkey, size_t rkeyLen, Completion* done) override {
    Peer* p = nullptr;
    Status st = cmaPeer(peer, &p);
    if (!ok(st) || len == 0) return st;
    if (len >= splitMin_ && done)
      return splitCopy(p, const_cast<void*>(local), len, remoteAddr, done, kSplitPut);
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
        if (__builtin_expect(id == kSplitAmId, 0)) serveSplit(in.src, d, len);
        else ctx_.amHandler(ctx_.handlerArg, in.src, id, d, len);
      });
      if (__builtin_expect(n < 0, 0)) {
        brokenRing(in);
        continue;
      }
      events += n;
    }
    if (__builtin_expect(splitsInFlight_ > 0, 0)) events += pollSplits();
    polling_ = false;
    return events;
  }

  void disconnect(int peer) override {
    if (peer >= 0 && peer < ctx_.size && localIndexOf_[peer] >= 0 && peer != ctx_.rank)
      peers_[localIndexOf_[peer]].dead = true;
  }

  // A receive from a dead peer would wait forever: its ring just stays empty (a send notices,
  // once the ring stays full). One peer per call, in turn: a kill() and a read of /proc.
  void checkLiveness() override {
    if (peers_.empty()) return;
    checkNext_ = (checkNext_ + 1) % peers_.size();
    Peer& p = peers_[checkNext_];
    if (!p.dead && p.pid > 0 && p.worldRank != ctx_.rank && !core::processAlive(p.pid))
      markDead(&p, Status::ErrProcFailed);
  }

 private:
  Status ringFull(Peer* p);
  Status splitCopy(Peer* p, void* local, size_t len, uint64_t remote, Completion* done,
                   SplitKind kind);
  // One CMA transfer between local and the peer's remote, in the direction of kind.
  static Status cmaMove(const Peer* p, SplitKind kind, void* local, uint64_t remote, size_t len) {
    return kind == kSplitGet ? cmaRead(p->pid, local, remote, len)
                             : cmaWrite(p->pid, local, remote, len);
  }
  void serveSplit(int src, const void* data, size_t len);
  int pollSplits();
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
  size_t splitMin_ = SIZE_MAX;  // RRT_SHM_CMA_SPLIT; SIZE_MAX: never
  int splitsInFlight_ = 0;      // over all peers
  Segment segment_;
  std::vector<int> localIndexOf_;   // by world rank, -1 when not on this node
  std::vector<Peer> peers_;         // by local index (own entry unused)
  size_t checkNext_ = 0;            // the peer checkLiveness looks at next
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

  // 8-byte AM one-way 0.08-0.35 us depending on vCPU placement (tests/unit/shm_transport_test.cc,
  // RRT_SHM_BENCH=1); where CMA takes over from the ring copies: copy_path.h.
  // Without CMA every message goes through the rings: the eager limit of the copies' profile.
  caps_.maxAm = chooseMaxAm(ringBytes_);
  const CopyPath path = copyPathFor(cma_ ? copyProfile() : CopyProfile::Rings, caps_.maxAm);
  if (cma_) {
    const uint64_t split = config::sizeOr(config::Tunable::ShmCmaSplit, path.splitMin);
    splitMin_ = split == 0 ? SIZE_MAX : std::max<size_t>(static_cast<size_t>(split), 2 * kPage);
  }
  caps_.flags = kAmBcopy | kOrdered | (cma_ ? (kGetZcopy | kPutZcopy | kPutDelivered) : 0u);
  caps_.minZcopy = cma_ ? path.minZcopy : 0;
  caps_.maxZcopy = cma_ ? kMaxZcopy : 0;
  caps_.zcopyMemTypes = cma_ ? memory::memTypeBit(MemType::Host) : 0;
  caps_.latencyUs = 0.2;
  caps_.bandwidthMBs = cma_ ? 16000 : 20000;
  caps_.eagerDefault = path.eagerDefault;

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
    peers_[j].asks = segment_.splitTable(me_, j);
    peers_[j].served = segment_.splitTable(j, me_);
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
  if (!core::processAlive(p->pid)) {
    markDead(p, Status::ErrProcFailed);
    return Status::ErrProcFailed;
  }
  return Status::NoResource;
}

// A get or put of len >= RRT_SHM_CMA_SPLIT bytes: the owner is asked to move the tail (from a
// page boundary of the destination near the middle) while we move the head. Then, if the owner
// has not claimed the tail, we take it back and move it too (Ok now); else the copy completes
// from progress() when the owner is done (InProgress).
Status ShmTransport::splitCopy(Peer* p, void* local, size_t len, uint64_t remote,
                               Completion* done, SplitKind kind) {
  const uintptr_t dst = kind == kSplitGet ? reinterpret_cast<uintptr_t>(local) : remote;
  const size_t head = ((dst + len / 2) & ~(kPage - 1)) - dst;
  int slot = -1;
  if (head > 0 && head < len && p->inFlight < kSplitSlots) {
    for (int i = 0; i < kSplitSlots; ++i)
      if (!p->waiting[i] && p->asks[i].state.load(std::memory_order_relaxed) == kSplitFree) {
        slot = i;
        break;
      }
  }
  if (slot < 0) return cmaResult(p, cmaMove(p, kind, local, remote, len));
  char* const localTail = static_cast<char*>(local) + head;
  SplitSlot& s = p->asks[slot];
  s.src = kind == kSplitGet ? remote + head : reinterpret_cast<uint64_t>(localTail);
  s.dst = kind == kSplitGet ? reinterpret_cast<uint64_t>(localTail) : remote + head;
  s.len = len - head;
  s.kind = kind;
  s.status = 0;
  s.state.store(kSplitAsked, std::memory_order_release);
  const uint32_t idx = static_cast<uint32_t>(slot);
  if (p->tx.push(kSplitAmId, &idx, sizeof idx, nullptr, 0) != Status::Ok) {
    s.state.store(kSplitFree, std::memory_order_relaxed);  // nobody was told: still ours
    return cmaResult(p, cmaMove(p, kind, local, remote, len));
  }
  Status st = cmaMove(p, kind, local, remote, head);
  uint32_t expect = kSplitAsked;
  if (s.state.compare_exchange_strong(expect, kSplitTaken, std::memory_order_acq_rel)) {
    if (ok(st)) st = cmaMove(p, kind, localTail, remote + head, len - head);
    s.state.store(kSplitFree, std::memory_order_release);
    return cmaResult(p, st);
  }
  // A failed head still waits for the owner's tail (it writes into our buffer, or reads from
  // it), then reports.
  if (!ok(st)) (void)cmaResult(p, st);
  p->headStatus[slot] = st;
  p->waiting[slot] = done;
  ++p->inFlight;
  ++splitsInFlight_;
  return Status::InProgress;
}

// The owner's side: the rank `src` asks us to write a tail of our buffer into its buffer (get),
// or to read a tail of its buffer into ours (put).
void ShmTransport::serveSplit(int src, const void* data, size_t len) {
  uint32_t idx;
  Peer* p = static_cast<unsigned>(src) < peerByRank_.size() ? peerByRank_[src] : nullptr;
  if (!p || len != sizeof idx) {
    RRT_WARN("shm: malformed split request from rank %d dropped", src);
    return;
  }
  memcpy(&idx, data, sizeof idx);
  if (idx >= static_cast<uint32_t>(kSplitSlots)) {
    RRT_WARN("shm: split request for slot %u from rank %d dropped", idx, src);
    return;
  }
  SplitSlot& s = p->served[idx];
  uint32_t expect = kSplitAsked;
  if (!s.state.compare_exchange_strong(expect, kSplitClaimed, std::memory_order_acq_rel))
    return;  // the reader took it back
  Status st = Status::ErrArg;
  if (p->connected && s.kind == kSplitGet)
    st = cmaWrite(p->pid, reinterpret_cast<const void*>(s.src), s.dst, static_cast<size_t>(s.len));
  else if (p->connected && s.kind == kSplitPut)
    st = cmaRead(p->pid, reinterpret_cast<void*>(s.dst), s.src, static_cast<size_t>(s.len));
  s.status = static_cast<int32_t>(st);
  s.state.store(ok(st) ? kSplitDone : kSplitFailed, std::memory_order_release);
}

// The asking side: completes the gets / puts whose tails the owners finished; fails those of
// an owner that died while it held the tail.
int ShmTransport::pollSplits() {
  int events = 0;
  for (Peer& p : peers_) {
    if (p.inFlight == 0) continue;
    const double t = core::now();
    if (t - p.lastCheck >= kLivenessCheckSeconds) {
      p.lastCheck = t;
      if (!p.dead && !core::processAlive(p.pid)) markDead(&p, Status::ErrProcFailed);
    }
    for (int i = 0; i < kSplitSlots; ++i) {
      Completion* c = p.waiting[i];
      if (!c) continue;
      SplitSlot& s = p.asks[i];
      const uint32_t state = s.state.load(std::memory_order_acquire);
      Status st;
      if (state == kSplitDone || state == kSplitFailed) {
        // The owner's own status is only logged: a value from another process is not trusted.
        if (state == kSplitFailed)
          RRT_WARN("shm: rank %d could not write its part of a split copy (status %d)",
                   p.worldRank, static_cast<int>(s.status));
        st = !ok(p.headStatus[i]) ? p.headStatus[i]
             : state == kSplitDone ? Status::Ok
                                   : Status::ErrTransport;
        s.state.store(kSplitFree, std::memory_order_relaxed);
      } else if (p.dead) {
        st = Status::ErrProcFailed;  // the slot stays Claimed: this peer is never asked again
      } else {
        continue;
      }
      p.waiting[i] = nullptr;
      --p.inFlight;
      --splitsInFlight_;
      ++events;
      c->fn(c, st);
    }
  }
  return events;
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
