// Engine lifecycle, peers, progress and flow control. The message protocols are in
// send.cc / recv.cc.
#include "runtime/proto/engine.h"

#include "rrt_config.h"  // RRT_HAVE_VERBS

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/rndv.h"
#include "runtime/transport/self/self_transport.h"
#include "runtime/transport/shm/shm_transport.h"
#include "runtime/transport/tcp/tcp_transport.h"
#ifdef RRT_HAVE_VERBS
#include "runtime/transport/verbs/verbs_transport.h"
#endif

namespace rrt::proto {

using core::Request;
using transport::Transport;

namespace {

// The transports rrt knows, in order of preference for a peer that several can reach.
struct TransportEntry {
  const char* name;
  transport::TransportPtr (*create)(const transport::Context&, Status*);
  bool needsLocalPeers;   // only worth creating when other ranks share the node
  bool needsRemotePeers;  // unless named in RRT_TRANSPORTS: only when some rank is elsewhere
  bool fenceAfterStart;   // its start() readies resources peers then use at once (verbs QPs):
                          // every rank fences again after start() when the entry is listed
};
const TransportEntry kTransports[] = {
    {"shm", &transport::shm::create, true, false, false},
    {"tcp", &transport::tcp::create, false, true, false},
#ifdef RRT_HAVE_VERBS
    {"verbs", &transport::verbs::create, false, true, true},
#endif
};

bool listed(const std::string& list, const char* name) {
  if (list == "auto" || list == "all") return true;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item == name) return true;
  return false;
}

// Cores the local ranks share, for the spin-or-yield choice. A rank pinned to one CPU while
// the node has a CPU for every local rank was bound one-per-core by its launcher (rrun's and
// mpirun's default, srun --cpu-bind): its peers run elsewhere, so it is not oversubscribed.
int usableCores(int localRanks) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  const int mine = CPU_COUNT(&set);
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (mine == 1 && localRanks > 1 && online >= localRanks) return localRanks;
  return mine;
}

}  // namespace

Status Engine::init() {
  log::init();
  RRT_TRY(wireup::init(&job_));
  log::setRank(job_.rank);
  stats_on_ = config::boolOr(config::Tunable::Stats, false);

  transport::Context ctx;
  ctx.rank = job_.rank;
  ctx.size = job_.size;
  ctx.localPeers = job_.localPeers;
  ctx.nodeOf = job_.nodeOf;
  ctx.jobId = job_.jobId;
  ctx.secret = job_.secret;
  ctx.amHandler = &Engine::onAm;
  ctx.peerFailed = &Engine::onPeerFailed;
  ctx.handlerArg = this;
  ctx.lookup = &wireup::lookup;

  bool allOnOneNode = true;
  for (uint32_t n : job_.nodeOf) allOnOneNode &= n == job_.nodeOf[0];

  Status st;
  transports_.push_back(transport::self::create(ctx, &st));
  const std::string& wanted = config::value(config::Tunable::Transports);
  for (const TransportEntry& t : kTransports) {
    if (!listed(wanted, t.name)) continue;
    if (t.needsLocalPeers && job_.localPeers.size() < 2) continue;
    if (t.needsRemotePeers && (job_.size < 2 || (wanted == "auto" && allOnOneNode))) continue;
    transport::TransportPtr tx = t.create(ctx, &st);
    if (!tx) {
      RRT_WARN("transport %s unavailable: %s", t.name, statusName(st));
      continue;
    }
    transports_.push_back(std::move(tx));
  }
  local_ = false;
  return startTransports();
}

Status Engine::initLocal(const wireup::JobInfo& job, std::vector<transport::TransportPtr> txs) {
  if (active_) return Status::ErrInternal;
  log::init();
  job_ = job;
  stats_on_ = false;
  transports_ = std::move(txs);
  ids_ = RequestIds();  // fresh ids for every local run (reproducible fuzz inputs)
  local_ = true;
  return startTransports();
}

// Publishes the transports' addresses, fences, starts them, and sets up the peers.
Status Engine::startTransports() {
  published_.assign(transports_.size(), false);
  for (size_t t = 0; t < transports_.size(); ++t) {
    std::vector<uint8_t> blob;
    RRT_TRY(transports_[t]->address(&blob));
    if (blob.empty() || local_) continue;
    RRT_TRY(wireup::publish(std::string("rrt.") + transports_[t]->name(), blob.data(), blob.size()));
    published_[t] = true;
  }
  if (!local_) RRT_TRY(wireup::fence());
  for (auto& tx : transports_) RRT_TRY(tx->start());
  // Decided from the configuration and the job's layout alone (the same on every rank), so that
  // every rank takes the same number of fences: a network transport serves someone when the job
  // spans nodes, or when shm may not serve the ranks of this node.
  bool multiNode = false;
  for (uint32_t n : job_.nodeOf) multiNode |= n != job_.nodeOf[0];
  bool fenceAgain = false;
  const std::string& wanted = config::value(config::Tunable::Transports);
  for (const TransportEntry& t : kTransports)
    fenceAgain |= !local_ && t.fenceAfterStart && listed(wanted, t.name) && job_.size > 1 &&
                  (multiNode || !listed(wanted, "shm"));
  if (fenceAgain) RRT_TRY(wireup::barrier());

  stats_.assign(transports_.size(), TransportStats{});
  peers_ = std::vector<Peer>(static_cast<size_t>(job_.size));
  pendingPeers_.clear();
  const int localRanks = static_cast<int>(job_.localPeers.size());
  core::configureWaiting(localRanks, usableCores(localRanks));
  core::addPoller(&Engine::poll, this);
  core::setIdleCheck(&Engine::checkLiveness, this);
  // With one transport besides self and an event fd (TCP alone; verbs alone, on its completion
  // channel), an idle wait sleeps in the kernel until data arrives: on a busy machine the woken
  // rank runs at once, where a yielding spinner waits for its turn. Transports that must be
  // polled (shm) keep spinning.
  if (transports_.size() == 2 && (transports_[1]->caps().flags & transport::kEventFd)) {
    idleFd_ = transports_[1]->eventFd();
    if (idleFd_ >= 0) core::setIdleWait(&Engine::idleWait, this);
  }
  active_ = true;
  return Status::Ok;
}

void Engine::finalize() {
  if (!active_) return;
  // Control messages (FIN, Ack) peers still wait for must leave before we do.
  double deadline = core::now() + 5.0;
  auto transportsFlushed = [this] {
    for (auto& tx : transports_)
      if (!tx->flushed()) return false;
    return true;
  };
  while ((!pendingPeers_.empty() || !getRetry_.empty() || !transportsFlushed()) &&
         core::now() < deadline) {
    if (core::progress() == 0) sched_yield();
  }
  if (stats_on_) printStats();
  // Nobody leaves while a peer may still read our memory or wait for an answer (a Cancel):
  // progress goes on until every rank has arrived. A peer that is through the barrier already
  // closes its connections meanwhile: that is its exit, not a failure.
  finalizing_ = true;
  if (!local_) (void)wireup::barrierProgressing();
  core::removePoller(&Engine::poll, this);
  core::setIdleCheck(nullptr, nullptr);
  if (idleFd_ >= 0) core::setIdleWait(nullptr, nullptr);
  idleFd_ = -1;
  finalizing_ = false;
  transports_.clear();
  if (!local_) wireup::finalize();
  active_ = false;
}

Peer* Engine::connect(int w) {
  Peer& p = peers_[static_cast<size_t>(w)];
  if (p.failed) return &p;
  for (size_t t = 0; t < transports_.size(); ++t) {
    Transport* tx = transports_[t].get();
    if (!tx->reachable(w)) continue;
    std::vector<uint8_t> blob;
    if (published_[t] && wireup::lookup(w, std::string("rrt.") + tx->name(), &blob) != Status::Ok) {
      RRT_WARN("no %s address for rank %d", tx->name(), w);
      continue;
    }
    Status st = tx->connect(w, blob.data(), blob.size());
    if (st != Status::Ok) {
      RRT_WARN("%s: cannot connect to rank %d: %s", tx->name(), w, statusName(st));
      continue;
    }
    p.tx = tx;
    choosePeerProto(w, p);
    RRT_DEBUG("rank %d via %s: eager <= %zu, zero-copy from %zu (%s)", w, tx->name(),
              p.proto.eagerLimit, p.proto.zcopyThreshold,
              p.proto.zcopyMode == wire::RndvMode::Get   ? "get"
              : p.proto.zcopyMode == wire::RndvMode::Put ? "put"
                                                         : "copy");
    return &p;
  }
  RRT_ERROR("no transport reaches rank %d", w);
  p.failed = true;
  return &p;
}

namespace {

// The protocol settings toward a peer reached through tx (w: the peer, for a warning; -1: none).
PeerProto protoFor(const transport::Transport& tx, int w) {
  const transport::Caps& caps = tx.caps();
  PeerProto pp;
  const size_t maxAmPayload = caps.maxAm - sizeof(wire::EagerSyncHeader);
  pp.eagerLimit = config::sizeOr(config::Tunable::EagerLimit, caps.eagerDefault);
  size_t frag = config::sizeOr(config::Tunable::RndvCopyFrag, 64 * 1024);
  pp.amPayload = std::max<size_t>(64, std::min(frag, caps.maxAm) - sizeof(wire::DataHeader));
  pp.amPayload = std::min(pp.amPayload, maxAmPayload);

  const bool canGet = caps.flags & transport::kGetZcopy;
  const bool canPut = caps.flags & transport::kPutZcopy;
  const std::string& mode = config::value(config::Tunable::RndvProto);
  pp.zcopyThreshold = std::max(caps.minZcopy, pp.eagerLimit + 1);
  if (strcmp(tx.name(), "shm") == 0)
    pp.zcopyThreshold = config::sizeOr(config::Tunable::ShmCmaThreshold, pp.zcopyThreshold);
  if (mode == "get" && canGet) {
    pp.zcopyMode = wire::RndvMode::Get;
    pp.zcopyThreshold = 0;
  } else if (mode == "put" && canPut) {
    pp.zcopyMode = wire::RndvMode::Put;
    pp.zcopyThreshold = 0;
  } else if (mode == "copy") {
    pp.zcopyMode = wire::RndvMode::Copy;
  } else {
    if (mode != "auto" && w >= 0)
      RRT_WARN("RRT_RNDV_PROTO=%s not possible to rank %d: using auto", mode.c_str(), w);
    pp.zcopyMode = canGet ? wire::RndvMode::Get : canPut ? wire::RndvMode::Put : wire::RndvMode::Copy;
  }
  return pp;
}

}  // namespace

void Engine::choosePeerProto(int w, Peer& p) { p.proto = protoFor(*p.tx, w); }

size_t Engine::singleCopyFrom(const char* transportName) const {
  for (const auto& t : transports_) {
    if (strcmp(t->name(), transportName) != 0) continue;
    const PeerProto pp = protoFor(*t, -1);
    if (pp.zcopyMode == wire::RndvMode::Copy) return SIZE_MAX;
    return std::max(pp.zcopyThreshold, pp.eagerLimit + 1);
  }
  return SIZE_MAX;
}

const char* Engine::protocolFor(int w, size_t bytes) {
  Peer* p = peer(w);
  if (!p || !p->tx) return "unreachable";
  if (bytes <= p->proto.eagerLimit) return "eager";
  if (bytes < p->proto.zcopyThreshold) return "rendezvous/copy";
  switch (p->proto.zcopyMode) {
    case wire::RndvMode::Get: return "rendezvous/get";
    case wire::RndvMode::Put: return "rendezvous/put";
    default: return "rendezvous/copy";
  }
}

// ---- flow control ---------------------------------------------------------------------------

void Engine::queuePending(Peer& p, Request* r) {
  p.pending.pushBack(r);
  if (!p.inPendingList) {
    p.inPendingList = true;
    pendingPeers_.push_back(static_cast<int>(&p - peers_.data()));
  }
}

void Engine::sendCtl(int w, transport::AmId id, const void* hdr, size_t len) {
  Peer& p = *peer(w);
  if (p.failed || !p.tx) {
    RRT_DEBUG("control message %u to unreachable rank %d dropped", id, w);
    return;
  }
  if (p.ctlHead == p.ctl.size()) {
    Status st = p.tx->amSend(w, id, hdr, len, nullptr, 0);
    if (st == Status::Ok) return;
    if (st != Status::NoResource) {
      RRT_WARN("control message to rank %d failed: %s", w, statusName(st));
      return;
    }
  }
  PendingCtl c;
  c.id = id;
  c.len = static_cast<uint8_t>(len);
  memcpy(c.bytes, hdr, len);
  p.ctl.push_back(c);
  if (!p.inPendingList) {
    p.inPendingList = true;
    pendingPeers_.push_back(w);
  }
}

int Engine::flushPending() {
  int events = 0;
  for (size_t i = 0; i < pendingPeers_.size();) {
    int w = pendingPeers_[i];
    Peer& p = peers_[static_cast<size_t>(w)];
    bool blocked = false;
    while (p.ctlHead < p.ctl.size()) {
      const PendingCtl& c = p.ctl[p.ctlHead];
      Status st = p.tx->amSend(w, c.id, c.bytes, c.len, nullptr, 0);
      if (st == Status::NoResource) {
        blocked = true;
        break;
      }
      ++p.ctlHead;
      ++events;
    }
    if (p.ctlHead == p.ctl.size()) {
      p.ctl.clear();
      p.ctlHead = 0;
    }
    while (!blocked && !p.pending.empty()) {
      Request* r = p.pending.popFront();
      Status st = progressSend(p, r);
      if (st == Status::NoResource) {
        p.pending.pushFront(r);
        blocked = true;
      } else {
        ++events;
      }
    }
    if (p.pending.empty() && p.ctl.empty()) {
      p.inPendingList = false;
      pendingPeers_[i] = pendingPeers_.back();
      pendingPeers_.pop_back();
    } else {
      ++i;
    }
  }
  for (size_t n = getRetry_.size(); n > 0; --n) {
    issueGets(getRetry_.popFront());  // may queue itself again
    ++events;
  }
  return events;
}

int Engine::poll(void* arg) {
  Engine* e = static_cast<Engine*>(arg);
  int events = 0;
  for (auto& tx : e->transports_) events += tx->progress();
  if (!e->pendingPeers_.empty() || !e->getRetry_.empty()) events += e->flushPending();
  if (__builtin_expect(!e->gpuActive_.empty(), 0)) events += e->progressGpu();
  return events;
}

int Engine::idleWait(void* arg, int ms) {
  Engine* e = static_cast<Engine*>(arg);
  if (!e->pendingPeers_.empty() || !e->getRetry_.empty()) return 0;
  if (!e->transports_[1]->armEventFd()) return 0;  // work came in while arming: no sleep
  pollfd p{e->idleFd_, POLLIN, 0};
  return ::poll(&p, 1, ms) > 0 ? 2 : 1;
}

// ---- failures -------------------------------------------------------------------------------

// RRT_PEER_FAILURE: auto aborts unless the program asked for error codes on RRT_COMM_WORLD
// itself (rrt's default handler is RRT_ERRORS_RETURN too, but a program that never chose one is
// not prepared to carry on without a peer).
bool Engine::peerFailureAborts() const {
  const std::string& policy = config::value(config::Tunable::PeerFailure);
  if (policy == "abort") return true;
  if (policy == "return") return false;
  if (policy != "auto") RRT_WARN("RRT_PEER_FAILURE=%s: want auto, abort or return", policy.c_str());
  const Comm* world = commLookup(RRT_COMM_WORLD);
  return !(world && world->errhandlerSet && world->errhandler == RRT_ERRORS_RETURN);
}

void Engine::checkLiveness(void* arg) {
  for (auto& tx : static_cast<Engine*>(arg)->transports_) tx->checkLiveness();
}

void Engine::onPeerFailed(void* arg, int peer, Status why) {
  static_cast<Engine*>(arg)->failPeer(peer, why);
}

void Engine::failPeer(int w, Status why) {
  if (w < 0 || w >= job_.size) return;
  Peer& p = peers_[static_cast<size_t>(w)];
  if (p.failed) return;
  p.failed = true;
  const bool abortJob = !local_ && !finalizing_ && peerFailureAborts();
  if (finalizing_) RRT_DEBUG("rank %d gone while finalizing (%s)", w, statusName(why));
  else RRT_WARN("rank %d failed (%s): failing its operations", w, statusName(why));
  while (Request* r = p.pending.popFront()) finishSend(r, Status::ErrProcFailed);
  p.ctl.clear();
  p.ctlHead = 0;
  if (p.rxEager) {
    Request* r = p.rxEager;
    p.rxEager = nullptr;
    if (r->phase == static_cast<uint8_t>(Phase::RecvEager)) finishRecv(r, Status::ErrProcFailed);
  }
  std::vector<Request*> inFlight;
  ids_.forEach([&](Request* r) {
    if (r->peer == w) inFlight.push_back(r);
  });
  for (Request* r : inFlight) {
    if (r->kind == core::ReqKind::Send) finishSend(r, Status::ErrProcFailed);
    else finishRecv(r, Status::ErrProcFailed);
  }
  if (gpu::enabled()) gpu::ipcPeerGone(w);  // its mappings, now that nobody holds them
  // Posted receives that name this peer can never match now.
  for (MatchQueues* q : matcher_.all()) {
    if (!q) continue;
    std::vector<Request*> dead;
    for (Request* r = q->posted().front(); r; r = q->posted().next(r))
      if (r->srcRank >= 0 && r->comm && r->comm->worldRank(r->srcRank) == w) dead.push_back(r);
    for (Request* r : dead) {
      q->posted().remove(r);
      finishRecv(r, Status::ErrProcFailed);
    }
  }
  if (abortJob) {
    // The job cannot complete: say which peer and why, then let the launcher end every rank
    // (PMIx_Abort; rrun and Open MPI's mpirun kill the job, and exit with this code).
    char msg[160];
    snprintf(msg, sizeof msg, "rank %d: peer rank %d (node %u) failed: %s; aborting the job "
             "(RRT_PEER_FAILURE=return, or RRT_ERRORS_RETURN set on RRT_COMM_WORLD, keeps it)",
             job_.rank, w, w < static_cast<int>(job_.nodeOf.size()) ? job_.nodeOf[w] : 0,
             statusName(why));
    RRT_ERROR("%s", msg);
    wireup::abortJob(static_cast<int>(Status::ErrProcFailed), msg);
    _exit(static_cast<int>(Status::ErrProcFailed));
  }
}

// One summary line per rank, then one line per peer it sent to: the transport and, where the
// transport tells, the route (a TCP connection's socket addresses), so a test can prove which
// pairs of a multi-host job went over which wire.
void Engine::printStats() {
  std::vector<TransportStats> per(transports_.size());
  for (const Peer& p : peers_) {
    for (size_t t = 0; t < transports_.size(); ++t)
      if (p.tx == transports_[t].get()) {
        per[t].msgs += p.msgsSent;
        per[t].bytes += p.bytesSent;
      }
  }
  std::string line;
  for (size_t t = 0; t < transports_.size(); ++t) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s%s %llu msgs %llu bytes", t ? ", " : "", transports_[t]->name(),
             static_cast<unsigned long long>(per[t].msgs),
             static_cast<unsigned long long>(per[t].bytes));
    line += buf;
  }
  const uint32_t myNode = job_.nodeOf.empty() ? 0 : job_.nodeOf[job_.rank];
  fprintf(stderr, "[rrt %d] stats: node %u sent %s\n", job_.rank, myNode, line.c_str());
  const core::WaitCounters& w = core::waitCounters();
  fprintf(stderr, "[rrt %d] stats: waits: %llu kernel sleeps (%llu woken by events) on %s, "
          "%llu yields, %llu naps\n", job_.rank, static_cast<unsigned long long>(w.kernelSleeps),
          static_cast<unsigned long long>(w.woken),
          idleFd_ >= 0 ? transports_[1]->name() : "no event fd",
          static_cast<unsigned long long>(w.yields), static_cast<unsigned long long>(w.naps));
  for (size_t w = 0; w < peers_.size(); ++w) {
    const Peer& p = peers_[w];
    if (!p.tx || p.msgsSent == 0) continue;
    const std::string route = p.tx->route(static_cast<int>(w));
    fprintf(stderr, "[rrt %d] stats: to %zu node %u %s%s%s %llu msgs %llu bytes\n", job_.rank, w,
            w < job_.nodeOf.size() ? job_.nodeOf[w] : 0, p.tx->name(), route.empty() ? "" : " ",
            route.c_str(), static_cast<unsigned long long>(p.msgsSent),
            static_cast<unsigned long long>(p.bytesSent));
  }
}

}  // namespace rrt::proto
