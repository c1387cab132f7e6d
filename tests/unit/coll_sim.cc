#include "tests/unit/coll_sim.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <random>

#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"

namespace rrt::coll::sim {
namespace {

struct Msg {
  uint32_t ctx;
  int src;  // world rank
  int tag;
  const void* buf;
  size_t bytes;
  std::vector<char> copy;  // eager data
  core::Request* sreq;     // nullptr once completed (eager)
};

struct Posted {
  uint32_t ctx;
  int src;  // world rank
  int tag;
  core::Request* rreq;
};

struct State {
  Mode mode = Mode::Eager;
  std::mt19937 rng{1};
  std::vector<std::deque<Msg>> unexpected;  // per destination world rank
  std::vector<std::deque<Posted>> posted;   // per receiving world rank
  std::vector<std::pair<core::Request*, Status>> toComplete;
  std::vector<uint32_t> nodes;  // node id per world rank; empty: one node
  int polls = 0;
};
State* gState = nullptr;

// Message bytes move like the real protocol moves them: through the GPU driver when either side
// is device memory (a test with the driver double), else memcpy.
void moveBytes(void* dst, const void* src, size_t n) {
  if (!n) return;
  if (gpu::enabled() && (gpu::isDevice(dst, n) || gpu::isDevice(src, n))) {
    (void)gpu::copy(dst, src, n);
    return;
  }
  std::memcpy(dst, src, n);
}

void deliver(Msg& m, core::Request* rreq) {
  const void* data = m.sreq ? m.buf : m.copy.data();
  size_t n = m.bytes;
  Status s = Status::Ok;
  if (n > rreq->bytes) {
    n = rreq->bytes;
    s = Status::ErrTruncate;
  }
  moveBytes(rreq->buf, data, n);
  rreq->status.bytes = n;
  rreq->status.tag = m.tag;
  gState->toComplete.push_back({rreq, s});
  if (m.sreq) gState->toComplete.push_back({m.sreq, Status::Ok});
}

uint32_t simNodeOf(int w) {
  const auto& n = gState->nodes;
  return static_cast<size_t>(w) < n.size() ? n[static_cast<size_t>(w)] : 0;
}

int worldOf(const proto::Comm& c, int r) { return c.worldRank(r); }

Status simIsend(proto::Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dst, int tag,
                uint8_t, core::Request** out) {
  State& st = *gState;
  core::Request* r = core::requestAlloc(core::ReqKind::Send);
  r->internal = true;
  r->buf = const_cast<void*>(buf);
  r->bytes = bytes;
  const int me = worldOf(comm, comm.rank), to = worldOf(comm, dst);
  Msg m{ctx, me, tag, buf, bytes, {}, r};
  if (st.mode == Mode::Eager) {
    m.copy.resize(bytes);
    moveBytes(m.copy.data(), buf, bytes);
    m.sreq = nullptr;
    st.toComplete.push_back({r, Status::Ok});
  }
  auto& q = st.posted[static_cast<size_t>(to)];
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it->ctx == ctx && it->src == me && it->tag == tag) {
      core::Request* rr = it->rreq;
      q.erase(it);
      deliver(m, rr);
      *out = r;
      return Status::Ok;
    }
  }
  st.unexpected[static_cast<size_t>(to)].push_back(std::move(m));
  *out = r;
  return Status::Ok;
}

Status simIrecv(proto::Comm& comm, uint32_t ctx, void* buf, size_t bytes, int src, int tag,
                core::Request** out) {
  State& st = *gState;
  core::Request* r = core::requestAlloc(core::ReqKind::Recv);
  r->internal = true;
  r->buf = buf;
  r->bytes = bytes;
  r->status.source = src;
  const int me = worldOf(comm, comm.rank), from = worldOf(comm, src);
  auto& q = st.unexpected[static_cast<size_t>(me)];
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it->ctx == ctx && it->src == from && it->tag == tag) {
      Msg m = std::move(*it);
      q.erase(it);
      deliver(m, r);
      *out = r;
      return Status::Ok;
    }
  }
  st.posted[static_cast<size_t>(me)].push_back({ctx, from, tag, r});
  *out = r;
  return Status::Ok;
}

// Completes a shuffled part of what is ready.
int simPoll(void*) {
  State& st = *gState;
  if (st.toComplete.empty()) return 0;
  std::shuffle(st.toComplete.begin(), st.toComplete.end(), st.rng);
  size_t n = 1 + st.rng() % st.toComplete.size();
  std::vector<std::pair<core::Request*, Status>> now(st.toComplete.end() - static_cast<long>(n),
                                                     st.toComplete.end());
  st.toComplete.resize(st.toComplete.size() - n);
  for (auto& [r, s] : now) core::requestComplete(r, s);
  return static_cast<int>(n);
}

}  // namespace

World::World(int ranks, Mode mode, uint32_t seed) {
  gState = new State;
  gState->mode = mode;
  gState->rng.seed(seed);
  gState->unexpected.resize(static_cast<size_t>(ranks));
  gState->posted.resize(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    auto c = std::make_unique<proto::Comm>();
    c->handle = RRT_COMM_WORLD;
    c->ctx = 0;
    c->rank = r;
    c->size = ranks;
    for (int i = 0; i < ranks; ++i) c->worldRanks.push_back(i);
    comms_.push_back(std::move(c));
  }
  P2p p;
  p.isend = simIsend;
  p.irecv = simIrecv;
  p.nodeOf = simNodeOf;
  setP2p(p);
  core::addPoller(simPoll, nullptr);
}

void World::setNodes(const std::vector<uint32_t>& nodes) { gState->nodes = nodes; }

World::~World() {
  core::removePoller(simPoll, nullptr);
  delete gState;
  gState = nullptr;
}

std::vector<std::unique_ptr<proto::Comm>> World::split(const std::vector<int>& color, uint32_t ctx) {
  std::vector<std::unique_ptr<proto::Comm>> out(comms_.size());
  for (size_t r = 0; r < comms_.size(); ++r) {
    auto c = std::make_unique<proto::Comm>();
    c->ctx = ctx;
    c->handle = 2;
    for (size_t i = 0; i < comms_.size(); ++i) {
      if (color[i] != color[r]) continue;
      if (i == r) c->rank = static_cast<int>(c->worldRanks.size());
      c->worldRanks.push_back(static_cast<int>(i));
    }
    c->size = static_cast<int>(c->worldRanks.size());
    out[r] = std::move(c);
  }
  return out;
}

bool World::waitAll(const std::vector<core::Request*>& reqs) {
  int idle = 0;
  for (;;) {
    bool all = true;
    for (core::Request* r : reqs) all = all && r->complete;
    if (all) return true;
    if (core::progress() == 0) {
      if (++idle > 1000) return false;
    } else {
      idle = 0;
    }
  }
}

size_t World::unmatched() const {
  size_t n = 0;
  for (auto& q : gState->unexpected) n += q.size();
  for (auto& q : gState->posted) n += q.size();
  return n + gState->toComplete.size();
}

}  // namespace rrt::coll::sim
