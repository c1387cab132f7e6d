#include "runtime/gpu/gpu.h"

#include "rrt_config.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/gpu/pipeline.h"
#include "runtime/gpu/rndv.h"
#if defined(RRT_HAVE_CUDA)
#include "runtime/gpu/cuda_driver.h"
#endif

namespace rrt::gpu {

bool gEnabled = false;

namespace {

constexpr size_t kBounceLimit = 64 * 1024;  // one copy below, a pipeline of chunks above
constexpr int kClasses = 48;

struct Stage {
  void* user = nullptr;  // the caller's device buffer
  void* host = nullptr;
  size_t capacity = 0;
  bool recv = false;
};

struct State {
  std::unique_ptr<Driver> owned;
  Driver* d = nullptr;
  Stream stream = nullptr;
  std::unique_ptr<memory::MemTypeCache> cache;
  std::unique_ptr<Pipeline> pipeline;
  std::vector<void*> free[kClasses];     // host buffers by size class
  std::vector<Stage*> stages;            // free Stage objects
  size_t chunk = 0;                      // RRT_CUDA_CHUNK (0 = auto)
  std::string describe = "off";
};

State& st() {
  static State* s = new State;  // never destroyed: requests may outlive finalize
  return *s;
}

Status query(void* arg, const void* p, memory::Region* out) {
  PointerInfo info;
  RRT_TRY(static_cast<Driver*>(arg)->pointerInfo(p, &info));
  out->type = info.type;
  out->base = info.base;
  out->size = info.size;
  out->id = info.bufferId;
  return Status::Ok;
}

int classOf(size_t bytes) {
  int c = 12;  // 4 KiB minimum
  while (c < kClasses - 1 && (size_t{1} << c) < bytes) ++c;
  return c;
}

Status start(Driver* d) {
  State& s = st();
  s.d = d;
  s.cache = std::make_unique<memory::MemTypeCache>(&query, d);
  s.pipeline = std::make_unique<Pipeline>(d);
  s.chunk = config::sizeOr(config::Tunable::CudaChunk, 0);
  s.stream = nullptr;  // created on first copy (needs a context)
  s.describe = std::string(d->name()) + ", " + std::to_string(d->deviceCount()) + " device(s)";
  gEnabled = true;
  return Status::Ok;
}

Status stream(Stream* out) {
  State& s = st();
  if (!s.d) return Status::ErrUnsupported;
  if (!s.stream) RRT_TRY(s.d->streamCreate(&s.stream));
  *out = s.stream;
  return Status::Ok;
}

// Asks the driver about [p, p+len) and corrects the memory-type cache where it disagrees (a
// freed device allocation, maybe reallocated with a new buffer id, or host memory now).
memory::MemType refresh(const void* p, size_t len, PointerInfo* info) {
  State& s = st();
  *info = PointerInfo{};
  if (s.d->pointerInfo(p, info) != Status::Ok) info->type = memory::MemType::Host;
  if (info->type != memory::MemType::Cuda) {
    s.cache->invalidate(p, len);  // a stale device entry goes; host is learnt on next use
    return memory::MemType::Host;
  }
  memory::Region reg;
  if (s.cache->classify(p, len, &reg) != memory::MemType::Cuda || reg.id != info->bufferId ||
      reg.base != info->base) {
    s.cache->invalidate(reinterpret_cast<const void*>(info->base), info->size);
    s.cache->invalidate(p, len);
    (void)s.cache->classify(p, len);
  }
  return memory::MemType::Cuda;
}

}  // namespace

Status copyStream(Stream* out) { return stream(out); }

Status deviceReduce(int op, int type, const void* in, void* inout, size_t n) {
  State& s = st();
  if (n == 0) return Status::Ok;
  if (!s.d) return Status::ErrUnsupported;
  Stream str;
  RRT_TRY(stream(&str));
  RRT_TRY(s.d->reduce(op, type, in, inout, n, str));
  return s.d->streamSynchronize(str);
}

bool deviceReduces(int op, int type) {
  State& s = st();
  Stream str;
  return s.d && stream(&str) == Status::Ok &&
         s.d->reduce(op, type, nullptr, nullptr, 0, str) == Status::Ok;
}

void* deviceAlloc(size_t bytes) {
  State& s = st();
  void* p = nullptr;
  if (!s.d || s.d->memAlloc(bytes, &p) != Status::Ok) return nullptr;
  return p;
}

void deviceFree(void* p) {
  State& s = st();
  if (p && s.d) {
    if (s.cache) s.cache->invalidate(p, 1);  // its range may hold something else later
    s.d->memFree(p);
  }
}
size_t bounceLimit() { return kBounceLimit; }

Proto sendProto(const void* buf, size_t bytes, bool sameNode, bool selfPeer, bool transportZcopyCuda,
                PointerInfo* info) {
  if (bytes <= kBounceLimit) return Proto::Bounce;
  if (refresh(buf, bytes, info) != memory::MemType::Cuda) return Proto::Host;
  ProtoInput in;
  in.send = memory::MemType::Cuda;
  in.recv = memory::MemType::Host;  // not known to the sender; the receiver adapts
  in.bytes = bytes;
  in.sameNode = sameNode;
  in.bounceLimit = kBounceLimit;
  in.ipcUsable = !selfPeer && config::boolOr(config::Tunable::CudaIpc, true);
  in.transportZcopyCuda = transportZcopyCuda;
  return selectProto(in);
}

bool recvIsDevice(void* buf, size_t bytes) {
  if (bytes <= kBounceLimit) return true;
  PointerInfo info;
  return refresh(buf, bytes, &info) == memory::MemType::Cuda;
}

Status init() {
  State& s = st();
  const std::string& mode = config::value(config::Tunable::Cuda);
  if (mode == "off") {
    s.describe = "off (RRT_CUDA=off)";
    return Status::Ok;
  }
  if (mode != "auto" && mode != "on") {
    RRT_WARN("RRT_CUDA=%s: expected auto, on or off; using auto", mode.c_str());
  }
  const bool required = mode == "on";
#if defined(RRT_HAVE_CUDA)
  Status why = Status::Ok;
  const char* reason = "";
  s.owned = loadCudaDriver(&why, &reason);
  if (s.owned) return start(s.owned.get());
  s.describe = std::string("unavailable: ") + reason;
  if (required) {
    RRT_ERROR("RRT_CUDA=on but %s", reason);
    return Status::ErrUnsupported;
  }
  RRT_DEBUG("CUDA support off: %s", reason);
  return Status::Ok;
#else
  s.describe = "not built (configure found no CUDA toolkit)";
  if (required) {
    RRT_ERROR("RRT_CUDA=on but rrt was built without CUDA");
    return Status::ErrUnsupported;
  }
  return Status::Ok;
#endif
}

void shutdown() {
  State& s = st();
  if (!s.d) return;
  gEnabled = false;
  rndvShutdown();
  s.pipeline.reset();
  for (auto& list : s.free) {
    for (void* p : list) s.d->hostFree(p);
    list.clear();
  }
  if (s.stream) s.d->streamDestroy(s.stream);
  s.stream = nullptr;
  s.cache.reset();
  s.d = nullptr;
  s.owned.reset();
}

void installDriver(Driver* d) {
  shutdown();
  if (d) (void)start(d);
}

Driver* driver() { return st().d; }
const char* describe() { return st().describe.c_str(); }
memory::MemTypeCache* memTypeCache() { return st().cache.get(); }

memory::MemType classifySlow(const void* p, size_t len) {
  State& s = st();
  if (!s.cache || !p) return memory::MemType::Host;
  return s.cache->classify(p, len);
}

Proto protoFor(memory::MemType send, memory::MemType recv, size_t bytes, bool sameNode,
               bool transportZcopyCuda) {
  ProtoInput in;
  in.send = send;
  in.recv = recv;
  in.bytes = bytes;
  in.sameNode = sameNode;
  in.bounceLimit = kBounceLimit;
  in.ipcUsable = config::boolOr(config::Tunable::CudaIpc, true);  // between two processes
  in.transportZcopyCuda = transportZcopyCuda;
  return selectProto(in);
}

void* hostBuffer(size_t bytes, size_t* capacity) {
  State& s = st();
  const int c = classOf(bytes ? bytes : 1);
  *capacity = size_t{1} << c;
  auto& list = s.free[c];
  if (!list.empty()) {
    void* p = list.back();
    list.pop_back();
    return p;
  }
  void* p = nullptr;
  if (s.d->hostAlloc(*capacity, &p) != Status::Ok) return nullptr;
  return p;
}

void releaseHostBuffer(void* p, size_t capacity) {
  if (!p) return;
  State& s = st();
  const int c = classOf(capacity);
  if (s.d) s.free[c].push_back(p);
}

Status copy(void* dst, const void* src, size_t len) {
  State& s = st();
  if (len == 0) return Status::Ok;
  if (!s.d) return Status::ErrUnsupported;
  Stream str;
  RRT_TRY(stream(&str));
  Status rc;
  const bool toHost = classifySlow(dst, len) == memory::MemType::Host;
  const bool fromDevice = classifySlow(src, len) == memory::MemType::Cuda;
  if (len <= kBounceLimit || !(toHost && fromDevice)) {
    rc = s.d->memcpyAsync(dst, src, len, str);
    if (rc == Status::Ok) rc = s.d->streamSynchronize(str);
  } else {
    // Device -> host in chunks, several in flight (the destination holds every chunk).
    Pipeline::Plan plan;
    plan.dir = Direction::ToHost;
    plan.device = const_cast<void*>(src);
    plan.bytes = len;
    plan.host = dst;
    plan.hostBytes = len;
    plan.chunk = Pipeline::chunkFor(len, s.chunk);
    if (plan.chunk > len) plan.chunk = len;
    plan.depth = 4;
    rc = s.pipeline->start(plan, str);
    if (rc == Status::Ok) rc = s.pipeline->run();
  }
  if (rc == Status::ErrArg && s.cache) {
    s.cache->invalidate(dst, len);
    s.cache->invalidate(src, len);
  }
  return rc;
}

namespace {

Stage* newStage() {
  State& s = st();
  if (!s.stages.empty()) {
    Stage* g = s.stages.back();
    s.stages.pop_back();
    return g;
  }
  return new Stage;
}

void freeStage(Stage* g) {
  releaseHostBuffer(g->host, g->capacity);
  *g = Stage{};
  st().stages.push_back(g);
}

}  // namespace

void* stagedUser(const core::Request* r) {
  const Stage* g = static_cast<const Stage*>(r->gpuStage);
  return g && g->recv ? g->user : nullptr;
}

void dropStage(core::Request* r) {
  Stage* g = static_cast<Stage*>(r->gpuStage);
  if (!g) return;
  r->gpuStage = nullptr;
  r->buf = g->user;
  freeStage(g);
}

Status stageSend(core::Request* r) {
  Stage* g = newStage();
  g->user = r->buf;
  g->host = hostBuffer(r->bytes, &g->capacity);
  if (!g->host) {
    freeStage(g);
    return Status::ErrNoMemory;
  }
  Status rc = copy(g->host, r->buf, r->bytes);
  if (rc != Status::Ok) {
    freeStage(g);
    return rc;
  }
  r->buf = g->host;
  r->memType = memory::MemType::Cuda;  // what the user passed (the wire says so)
  r->gpuStage = g;
  return Status::Ok;
}

Status stageRecv(core::Request* r) {
  Stage* g = newStage();
  g->user = r->buf;
  g->recv = true;
  g->host = hostBuffer(r->bytes, &g->capacity);
  if (!g->host) {
    freeStage(g);
    return Status::ErrNoMemory;
  }
  r->buf = g->host;
  r->memType = memory::MemType::Cuda;
  r->gpuStage = g;
  return Status::Ok;
}

Status unstage(core::Request* r, Status s) {
  Stage* g = static_cast<Stage*>(r->gpuStage);
  r->gpuStage = nullptr;
  if (!g) return s;
  r->buf = g->user;
  Status rc = Status::Ok;
  if (g->recv && r->status.bytes && !r->status.cancelled)
    rc = copy(g->user, g->host, std::min(r->status.bytes, r->bytes));
  freeStage(g);
  if (rc != Status::Ok) {
    RRT_WARN("copy of a received message into device memory failed: %s", statusName(rc));
    if (s == Status::Ok) return rc;
  }
  return s;
}

}  // namespace rrt::gpu
