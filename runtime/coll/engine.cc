// The collective engine: starting tasks, the poller that advances them, and Task's posting
// helpers. See coll.h and task.h for the contracts.
#include "runtime/coll/node_layout.h"
#include <algorithm>
#include <new>

#include "runtime/coll/device_stage.h"
#include "runtime/coll/direct.h"
#include "runtime/coll/node_segment.h"
#include "runtime/coll/selection.h"
#include "runtime/coll/task.h"
#include "runtime/core/log.h"
#include "runtime/core/progress.h"
#include "runtime/gpu/gpu.h"

namespace rrt::coll {
namespace {

P2p gP2p;
std::vector<Task*> gActive;  // unfinished tasks, in start order
bool gPollerAdded = false;
bool gPolling = false;

// Completes the user's request and deletes the task.
void finish(Task* t, Status s) {
  core::Request* req = t->userReq_;
  delete t;
  req->collTask = nullptr;
  if (__builtin_expect(req->gpuStage != nullptr, 0)) {
    s = unstageDeviceBuffers(req->gpuStage, s);
    req->gpuStage = nullptr;
  }
  core::requestComplete(req, s == Status::Ok ? Status::Ok : s);
}

// Advances t once; true when t finished (and is gone).
bool step(Task* t) {
  t->ready_ = false;
  if (t->failure_ != Status::Ok) {  // draining after an error
    if (t->pending() > 0) return false;
    finish(t, t->failure_);
    return true;
  }
  Status s = t->advance();
  if (s == Status::InProgress) return false;
  if (failed(s) && t->pending() > 0) {
    t->failure_ = s;
    return false;
  }
  finish(t, s);
  return true;
}

int pollTasks(void*) {
  if (gPolling || gActive.empty()) return 0;
  gPolling = true;
  int events = 0;
  bool finished = false;
  // Index loop: finishing a task may start another (an internal user's callback).
  for (size_t i = 0; i < gActive.size(); ++i) {
    Task* t = gActive[i];
    if (!t->ready_) continue;
    ++events;
    if (step(t)) {
      gActive[i] = nullptr;
      finished = true;
    }
  }
  // Compacted only when a task finished: an idle poll (the waiting loop) costs one pass.
  if (finished)
    gActive.erase(std::remove(gActive.begin(), gActive.end(), nullptr), gActive.end());
  gPolling = false;
  return events;
}

}  // namespace

void onRequestComplete(core::Request* r, void* arg) {
  Task* t = static_cast<Task*>(arg);
  --t->pending_;
  t->notify_->ready_ = true;
  if (r->status.error != RRT_SUCCESS && t->error_ == Status::Ok)
    t->error_ = static_cast<Status>(r->status.error);
}

void setP2p(const P2p& p) { gP2p = p; }

namespace {

// Idle scratch memory a communicator keeps for its next collectives (the two n-byte buffers of
// a reduce up to 32 MiB); larger ones get fresh memory per call, as a bound on what an idle
// communicator holds.
constexpr size_t kScratchKeepBytes = 64 * 1024 * 1024;

// What runtime/coll keeps per communicator (comm.collState), made by its first collective and
// freed with it.
struct CommState {
  unsigned shape = 0;  // kShapeNodeAware (node_layout.h: worth a hierarchy), kShapeSharedMemory
  ScratchCache scratch;
  std::unique_ptr<NodeSegment> segment;  // node_segment.h, made by the first call wanting it
  size_t segmentTriedBytes = 0;  // the largest slot size open() was tried with
  CommState(unsigned s, size_t keepBytes) : shape(s), scratch(keepBytes) {}
};

// Whether every rank of comm shares memory with this one (then all of them do with each other).
bool sharesMemoryWithAll(const proto::Comm& comm) {
  if (!gP2p.sharesMemory || comm.size < 2) return false;
  for (int r = 0; r < comm.size; ++r)
    if (r != comm.rank && !gP2p.sharesMemory(comm.worldRank(r))) return false;
  return true;
}

// The shared-memory algorithms only where GPU support is off. A rank with a device buffer
// cannot run them (they load from its buffers), and which algorithm a call takes must not
// depend on where one rank's buffers live: the others cannot know. GPU support (a GPU and
// libcuda present) is a property of the node, alike on the ranks of a one-node communicator;
// with it on, device buffers keep their own paths (device kernels, CUDA IPC).
bool sharedMemoryAlgorithms(const proto::Comm& comm) {
  return !gpu::enabled() && sharesMemoryWithAll(comm);
}

CommState& commState(proto::Comm& comm) {
  if (!comm.collState) {
    const bool shared = sharedMemoryAlgorithms(comm);
    const unsigned shape = (worthHierarchy(commNodeIds(comm)) ? kShapeNodeAware : 0u) |
                           (shared ? kShapeSharedMemory : 0u) |
                           (shared && singleCopyMidSizes() ? kShapeSingleCopy : 0u);
    comm.collState = new CommState(shape, kScratchKeepBytes);
    comm.collStateFree = [](void* s) { delete static_cast<CommState*>(s); };
  }
  return *static_cast<CommState*>(comm.collState);
}

unsigned commShape(proto::Comm& comm) { return commState(comm).shape; }

}  // namespace

Status commNodeSegment(Direct& d, size_t callBytes, NodeSegment** out) {
  CommState& st = commState(d.comm());
  const size_t full = NodeSegment::slotBytesFor(d.size());
  const size_t want = callBytes <= kSmallCallBytes ? std::min(kSmallSlotBytes, full) : full;
  if (st.segmentTriedBytes < want) {  // alike on every rank: the same calls came before
    st.segmentTriedBytes = want;
    std::unique_ptr<NodeSegment> made;
    RRT_TRY(NodeSegment::open(d, want, &made));
    if (made) st.segment = std::move(made);  // the old one's pieces are all done: nobody reads it
    RRT_DEBUG("coll: communicator %d: %s shared segment of %zu-byte slots", d.comm().handle,
              st.segment ? "a" : "no", st.segment ? st.segment->slotBytes() : want);
  }
  *out = st.segment.get();
  return Status::Ok;
}

ScratchCache& commScratch(proto::Comm& comm) { return commState(comm).scratch; }

std::vector<uint32_t> commNodeIds(const proto::Comm& comm) {
  std::vector<uint32_t> ids(static_cast<size_t>(comm.size), 0);
  if (gP2p.nodeOf)
    for (int r = 0; r < comm.size; ++r) ids[static_cast<size_t>(r)] = gP2p.nodeOf(comm.worldRank(r));
  return ids;
}
const P2p& p2p() { return gP2p; }
size_t activeCount() { return gActive.size(); }

namespace {

// True when every rank of the communicator can tell from its own arguments that no rank moves a
// byte (MPI makes the counts agree): then the collective has nothing to wait for, and returns at
// once as Open MPI's and MPICH's do, instead of exchanging empty messages (IMB's 0-byte rows:
// 70-210 us at 4 ranks). Not for barrier, nor for the v-variants where a rank sees only its own
// counts (alltoallv, gatherv, scatterv).
bool movesNothing(const CollArgs& a) {
  auto allZero = [](const std::vector<size_t>& v) {
    return !v.empty() && std::all_of(v.begin(), v.end(), [](size_t b) { return b == 0; });
  };
  switch (a.kind) {
    case CollKind::Bcast:
    case CollKind::Reduce:
    case CollKind::Allreduce:
    case CollKind::Scan:
    case CollKind::Exscan: return a.count == 0 || a.typeSize == 0;
    case CollKind::Allgather:
    case CollKind::Alltoall:
    case CollKind::Gather:
    case CollKind::Scatter: return a.blockBytes == 0;
    case CollKind::Allgatherv:
    case CollKind::ReduceScatter: return allZero(a.recvBytes);
    default: return false;
  }
}

// The user's request of a collective on comm (holding comm until it is released).
core::Request* newCollRequest(proto::Comm& comm) {
  core::Request* req = core::requestAlloc(core::ReqKind::Coll);
  req->comm = &comm;
  proto::commHold(comm, req);
  req->status.source = RRT_ANY_SOURCE;
  req->status.tag = RRT_ANY_TAG;
  return req;
}

// Starts algo on comm: the user's request in *out (movesNothing already ruled out).
Status startAlgorithm(proto::Comm& comm, const Algorithm* algo, CollArgs&& args,
                      core::Request** out) {
  void* stage = nullptr;  // host mirrors of device buffers (device_stage.h)
  if (__builtin_expect(gpu::enabled(), 0) && !runsOnDevice(comm, args))
    RRT_TRY(stageDeviceBuffers(comm, args, &stage));
  const uint32_t seq = comm.collSeq++;
  Task* t = nullptr;
  try {
    t = algo->create(comm, std::move(args));
  } catch (const std::bad_alloc&) {
    (void)unstageDeviceBuffers(stage, Status::ErrNoMemory);
    return Status::ErrNoMemory;
  }
  RRT_TRACE("coll: %s %s seq %u on comm %d", kindName(algo->kind), algo->name, seq, comm.handle);
  launch(comm, t, collTag(seq), out, stage);
  return Status::Ok;
}

}  // namespace

Status start(proto::Comm& comm, CollArgs&& args, core::Request** out) {
  if (!gP2p.isend) return Status::ErrInternal;
  if (movesNothing(args)) {
    core::Request* req = newCollRequest(comm);
    ++comm.collSeq;  // every rank skips it alike: the sequence stays in step either way
    core::requestComplete(req, Status::Ok);
    *out = req;
    return Status::Ok;
  }
  const Algorithm* algo = select(args, comm.size, commShape(comm));
  if (!algo) return Status::ErrInternal;
  return startAlgorithm(comm, algo, std::move(args), out);
}

void launch(proto::Comm& comm, Task* t, int tag, core::Request** out, void* gpuStage) {
  core::Request* req = newCollRequest(comm);
  req->gpuStage = gpuStage;
  t->tag_ = tag;
  t->userReq_ = req;
  req->collTask = t;
  if (!gPollerAdded) {
    core::addPoller(pollTasks, nullptr);
    gPollerAdded = true;
  }
  *out = req;
  if (!step(t)) gActive.push_back(t);
}

Status run(proto::Comm& comm, CollArgs&& args) {
  if (!gP2p.isend) return Status::ErrInternal;
  if (movesNothing(args)) {
    ++comm.collSeq;  // as start() does
    return Status::Ok;
  }
  const bool direct = !hasDeviceBuffer(comm, args);  // direct.h
  const Algorithm* algo = select(args, comm.size, commShape(comm) | (direct ? kShapeDirect : 0u));
  if (!algo) return Status::ErrInternal;
  if (algo->direct && direct) {
    const uint32_t seq = comm.collSeq++;
    RRT_TRACE("coll: %s %s (direct) seq %u on comm %d", kindName(algo->kind), algo->name, seq,
              comm.handle);
    Direct d(comm, collTag(seq));
    return d.finish(algo->direct(d, args));
  }
  core::Request* req = nullptr;
  RRT_TRY(startAlgorithm(comm, algo, std::move(args), &req));
  return await(req);
}

Status await(core::Request* req) {
  Status s = core::waitFor([req] { return req->complete; });
  if (s != Status::Ok) return s;  // timed out: the request stays with the engine
  s = static_cast<Status>(req->status.error);
  core::requestRelease(req);
  return s;
}

// ---- Task ----------------------------------------------------------------------------------

const ScratchCache* scratchCacheOf(const proto::Comm& comm) {
  return comm.collState ? &static_cast<const CommState*>(comm.collState)->scratch : nullptr;
}

Task::~Task() {
  if (nScratch_) {
    ScratchCache& cache = commScratch(comm_);
    for (size_t i = 0; i < nScratch_; ++i) cache.release(scratch_[i]);
  }
  for (size_t i = 0; i < live_.size(); ++i) core::requestRelease(live_[i]);
  for (size_t i = 0; i < slots_.size(); ++i) core::requestRelease(slots_[i]);
  for (void* p : deviceScratch_) gpu::deviceFree(p);
}

namespace {
// Free blocks of Task::kPooledBytes, linked through their first word. Kept to a few: more
// tasks than that outstanding at once return their blocks to the heap.
constexpr int kPoolKeep = 64;
void* gFreeTasks = nullptr;
int gFreeCount = 0;
}  // namespace

void* Task::operator new(size_t bytes) {
  if (bytes > kPooledBytes) return ::operator new(bytes);
  if (void* p = gFreeTasks) {
    gFreeTasks = *static_cast<void**>(p);
    --gFreeCount;
    return p;
  }
  return ::operator new(kPooledBytes);
}

void Task::operator delete(void* p, size_t bytes) {
  if (bytes > kPooledBytes || gFreeCount == kPoolKeep) {
    ::operator delete(p);
    return;
  }
  *static_cast<void**>(p) = gFreeTasks;
  gFreeTasks = p;
  ++gFreeCount;
}

void Task::deviceReduce(const void* in, void* inout, size_t count) const {
  const Reducer& r = args_.reducer;
  Status s = gpu::deviceReduce(r.op, r.baseType, in, inout, count * r.baseCount);
  if (s != Status::Ok && error_ == Status::Ok) error_ = s;
}

void Task::deviceCopy(void* dst, const void* src, size_t n) const {
  Status s = gpu::copy(dst, src, n);
  if (s != Status::Ok && error_ == Status::Ok) error_ = s;
}

Status Task::post(Status s, core::Request* r, core::Request** slot) {
  if (s != Status::Ok) {
    if (error_ == Status::Ok) error_ = s;
    if (slot) *slot = nullptr;
    return s;
  }
  if (r->complete) {
    if (r->status.error != RRT_SUCCESS && error_ == Status::Ok)
      error_ = static_cast<Status>(r->status.error);
    if (!slot) {  // nothing to wait for (an eager send): released now, not kept for idle()
      core::requestRelease(r);
      return Status::Ok;
    }
  } else {
    r->onComplete = onRequestComplete;
    r->onCompleteArg = this;
    ++pending_;
  }
  if (slot) {
    *slot = r;
    slots_.push(r);
  } else {
    live_.push(r);
  }
  return Status::Ok;
}

Status Task::send(int peer, const void* buf, size_t bytes, core::Request** slot) {
  core::Request* r = nullptr;
  Status s = gP2p.isend(comm_, comm_.collCtx(), buf, bytes, peer, tag_, 0, &r);
  return post(s, r, slot);
}

Status Task::recv(int peer, void* buf, size_t bytes, core::Request** slot) {
  core::Request* r = nullptr;
  Status s = gP2p.irecv(comm_, comm_.collCtx(), buf, bytes, peer, tag_, &r);
  return post(s, r, slot);
}

bool Task::idle() {
  if (pending_ > 0) {
    // Release what finished so far only when all did (cheap: steps post a handful).
    return false;
  }
  for (size_t i = 0; i < live_.size(); ++i) core::requestRelease(live_[i]);
  live_.clear();
  return true;
}

bool Task::done(core::Request*& slot) {
  if (!slot) return true;
  if (!slot->complete) return false;
  (void)slots_.remove(slot);
  core::requestRelease(slot);
  slot = nullptr;
  return true;
}

char* Task::scratch(size_t bytes) {
  if (__builtin_expect(onDevice(), 0)) {
    void* d = gpu::deviceAlloc(bytes ? bytes : 1);
    if (d) deviceScratch_.push_back(d);
    return static_cast<char*>(d);
  }
  if (nScratch_ == kMaxScratch) {
    RRT_ERROR("coll: a task asked for more than %zu scratch buffers", kMaxScratch);
    return nullptr;
  }
  ScratchCache::Buffer b = commScratch(comm_).acquire(bytes);
  if (b.data) scratch_[nScratch_++] = b;
  return b.data;
}

}  // namespace rrt::coll
