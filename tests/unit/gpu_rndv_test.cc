// The device-buffer rendezvous through the real protocol engine, on the CPU: the engine runs as
// rank 0 of two without PMIx (Engine::initLocal); "rank 1" is a loopback transport that hands
// every message rank 0 sends to it back to rank 0 as if rank 1 had sent it (match headers
// rewritten to source 1). So rank 0 is both the sender and the receiver of each message, and
// both halves of every protocol run: CUDA IPC (same node), the pipelined copy (other node),
// their fallbacks and failures. The GPU is the driver double (gpu_fake_driver.h): device memory
// the CPU cannot touch, IPC mappings at their own addresses that keep a freed allocation's
// bytes, copies logged (and, in manual mode, run when the test says).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/progress.h"
#include "runtime/core/request.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/rndv.h"
#include "runtime/proto/comm.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"
#include "runtime/proto/wire.h"
#include "runtime/transport/self/self_transport.h"
#include "tests/unit/engine_harness.h"
#include "tests/unit/gpu_fake_driver.h"

namespace rrt::proto {
namespace {

using gpu::test::FakeDriver;

struct Msg {
  transport::AmId id;
  std::vector<uint8_t> bytes;
  size_t copiesIssued;  // the double's copy log length when it was sent
};

// Rank 1: every message to it comes back to rank 0 from rank 1, at the next progress().
class Loopback final : public transport::Transport {
 public:
  // gdr: also one-sided get/put that move device memory (a GPUDirect RDMA transport), with
  // registration required, as verbs.
  Loopback(FakeDriver* fake, bool gdr) : fake_(fake) {
    caps_.flags = transport::kAmBcopy | transport::kOrdered;
    caps_.maxAm = 16384;
    caps_.zcopyMemTypes = memory::memTypeBit(memory::MemType::Host);
    caps_.eagerDefault = 4096;
    if (gdr) {
      caps_.flags |= transport::kGetZcopy | transport::kPutZcopy | transport::kNeedsReg;
      caps_.maxZcopy = 1 << 20;
      caps_.zcopyMemTypes |= memory::memTypeBit(memory::MemType::Cuda);
    }
  }
  // Registration as verbs does it: device memory only where the driver says so; a refusal
  // (refuseDevice) turns the capability off.
  Status memReg(void* addr, size_t len, memory::MemType type, transport::MemHandle** out) override {
    *out = nullptr;
    if (refuseRegAfter == 0) return Status::ErrTransport;
    if (refuseRegAfter > 0) --refuseRegAfter;
    if (type == memory::MemType::Cuda) {
      gpu::PointerInfo info;
      fake_->pointerInfo(addr, &info);
      if (info.type != memory::MemType::Cuda) return Status::ErrArg;
      if (refuseDevice) {
        caps_.zcopyMemTypes &= ~memory::memTypeBit(memory::MemType::Cuda);
        return Status::ErrUnsupported;
      }
      ++deviceRegs;
    }
    auto* h = new transport::MemHandle;
    h->addr = addr;
    h->length = len;
    ++liveRegs;
    *out = h;
    return Status::Ok;
  }
  void memDereg(transport::MemHandle* mh) override {
    if (!mh) return;
    --liveRegs;
    delete mh;
  }
  size_t rkeyPack(const transport::MemHandle* mh, void* out) const override {
    memcpy(out, &mh, sizeof mh);
    return sizeof mh;
  }
  // Moves bytes between any two of host / device memory (the double's pages), at once.
  Status get(int, void* local, size_t len, transport::MemHandle* lmh, uint64_t remote,
             const void*, size_t, transport::Completion*) override {
    if (!lmh) return Status::ErrArg;
    if (refuseGets) return Status::ErrUnsupported;
    ++gets;
    move(local, reinterpret_cast<const void*>(remote), len);
    return Status::Ok;
  }
  Status put(int, const void* local, size_t len, transport::MemHandle* lmh, uint64_t remote,
             const void*, size_t, transport::Completion*) override {
    if (!lmh) return Status::ErrArg;
    ++puts;
    move(reinterpret_cast<void*>(remote), local, len);
    return Status::Ok;
  }
  int deviceRegs = 0, liveRegs = 0, gets = 0, puts = 0;
  int refuseRegAfter = -1;  // >= 0: that many more registrations succeed, then all fail
  bool refuseDevice = false, refuseGets = false;
  const char* name() const override { return "loopback"; }
  const transport::Caps& caps() const override { return caps_; }
  Status address(std::vector<uint8_t>* blob) override {
    blob->clear();
    return Status::Ok;
  }
  bool reachable(int peer) const override { return peer == 1; }
  Status connect(int peer, const void*, size_t) override {
    return peer == 1 ? Status::Ok : Status::ErrRank;
  }
  Status amSend(int, transport::AmId id, const void* hdr, size_t hdrLen, const void* payload,
                size_t len) override {
    if (refuse > 0) {  // NoResource now and then: the senders must resume where they stopped
      --refuse;
      return Status::NoResource;
    }
    Msg m{id, {}, fake_->log.size()};
    m.bytes.assign(static_cast<const uint8_t*>(hdr), static_cast<const uint8_t*>(hdr) + hdrLen);
    if (len)
      m.bytes.insert(m.bytes.end(), static_cast<const uint8_t*>(payload),
                     static_cast<const uint8_t*>(payload) + len);
    sent.push_back(m);
    queue_.push_back(m);
    return Status::Ok;
  }
  int progress() override {
    std::deque<Msg> q;
    q.swap(queue_);
    for (Msg& m : q) {
      // The match header opens Eager, EagerSync and RTS: it now says source 1.
      if ((m.id == wire::kEager || m.id == wire::kEagerSync || m.id == wire::kRts) &&
          m.bytes.size() >= sizeof(wire::MatchHeader)) {
        const int32_t one = 1;
        memcpy(m.bytes.data() + offsetof(wire::MatchHeader, src), &one, sizeof one);
      }
      Engine::deliver(&engine(), 1, m.id, m.bytes.data(), m.bytes.size());
    }
    return static_cast<int>(q.size());
  }
  std::vector<Msg> sent;
  int refuse = 0;

 private:
  void move(void* dst, const void* src, size_t n) {
    std::vector<char> tmp(n);
    fake_->devRead(tmp.data(), src, n);  // host memory: a plain copy
    fake_->devWrite(dst, tmp.data(), n);
  }
  FakeDriver* fake_;
  transport::Caps caps_;
  std::deque<Msg> queue_;
};

std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>(i * 7 + seed + (i >> 12));
  return v;
}

class GpuRndv : public ::testing::Test {
 protected:
  // sameNode: IPC is possible; chunk: RRT_CUDA_CHUNK (0: auto).
  void start(bool sameNode, size_t chunk = 0, bool ipc = true, bool gdr = false) {
    setenv("RRT_CUDA_IPC", ipc ? "on" : "off", 1);
    if (chunk) setenv("RRT_CUDA_CHUNK", std::to_string(chunk).c_str(), 1);
    else unsetenv("RRT_CUDA_CHUNK");
    config::reload();
    fake_ = new FakeDriver;
    gpu::installDriver(fake_);
    loop_ = new Loopback(fake_, gdr);
    ASSERT_EQ(test::startRankZeroOfTwo("gpu-rndv", sameNode, loop_), Status::Ok);
    commInitPredefined(0, 2);
    world_ = commLookup(RRT_COMM_WORLD);
    started_ = true;
  }
  void TearDown() override {
    if (!started_) return;
    for (int i = 0; i < 4; ++i) core::progress();
    commFinalizeAll();
    engine().finalize();
    gpu::installDriver(nullptr);
    EXPECT_EQ(fake_->liveIpcMappings(), 0u) << "IPC mappings left open";
    EXPECT_EQ(fake_->hostAllocs, fake_->hostFrees) << "staging buffers leaked";
    for (void* p : devs_) fake_->devFree(p);
    delete fake_;
    unsetenv("RRT_CUDA_IPC");
    unsetenv("RRT_CUDA_CHUNK");
    config::reload();
    started_ = false;
  }
  void* dev(size_t n) {
    void* p = fake_->devAlloc(n);
    devs_.push_back(p);
    return p;
  }
  void forget(void* p) {
    for (auto& d : devs_)
      if (d == p) d = nullptr;
  }
  // Progress until both requests are complete; bounded, so a hang is a failure, not a hang.
  bool drive(core::Request* a, core::Request* b) {
    for (int i = 0; i < 200000; ++i) {
      if ((!a || a->complete) && (!b || b->complete)) return true;
      core::progress();
      if (fake_->manual && fake_->queued()) fake_->completeNext();
    }
    return false;
  }
  // Sends n bytes from s to "rank 1" and receives them from it into r (capacity rn); the
  // receive is posted first unless unexpected. Returns the two statuses.
  void xfer(void* s, size_t n, void* r, size_t rn, Status* sendSt, Status* recvSt,
            size_t* got = nullptr, bool unexpected = false) {
    core::Request *sr = nullptr, *rr = nullptr;
    if (!unexpected) {
      ASSERT_EQ(irecv(*world_, world_->ctx, r, rn, 1, 9, &rr), Status::Ok);
    }
    ASSERT_EQ(isend(*world_, world_->ctx, s, n, 1, 9, 0, &sr), Status::Ok);
    if (unexpected) {
      for (int i = 0; i < 4; ++i) core::progress();
      ASSERT_EQ(irecv(*world_, world_->ctx, r, rn, 1, 9, &rr), Status::Ok);
    }
    ASSERT_TRUE(drive(sr, rr)) << "the transfer hangs";
    *sendSt = static_cast<Status>(sr->status.error);
    *recvSt = static_cast<Status>(rr->status.error);
    if (got) *got = rr->status.bytes;
    core::requestRelease(sr);
    core::requestRelease(rr);
  }
  std::vector<char> read(void* p, size_t n, bool device) {
    std::vector<char> v(n);
    if (device) fake_->devRead(v.data(), p, n);
    else memcpy(v.data(), p, n);
    return v;
  }
  // The RTS messages rank 0 sent, in order.
  std::vector<wire::RtsHeader> rtsSent() const {
    std::vector<wire::RtsHeader> out;
    for (const Msg& m : loop_->sent)
      if (m.id == wire::kRts) {
        wire::RtsHeader h;
        memcpy(&h, m.bytes.data(), sizeof h);
        out.push_back(h);
      }
    return out;
  }
  size_t ipcRtsCount() const {
    size_t k = 0;
    for (const auto& h : rtsSent()) k += h.mode == static_cast<uint8_t>(wire::RndvMode::Ipc);
    return k;
  }

  FakeDriver* fake_ = nullptr;
  Loopback* loop_ = nullptr;
  Comm* world_ = nullptr;
  bool started_ = false;
  std::vector<void*> devs_;
};

// ---- CUDA IPC --------------------------------------------------------------------------------

TEST_F(GpuRndv, IpcDeviceToDeviceAndToHostIsOneCopyFromTheMapping) {
  start(true);
  for (bool recvDev : {true, false}) {
    for (size_t n : {size_t{65537}, size_t{(1u << 20) + 3}, size_t{8u << 20}}) {
      SCOPED_TRACE(std::string(recvDev ? "D->D " : "D->H ") + std::to_string(n));
      void* s = dev(n);
      std::vector<char> host(n, 0);
      void* r = recvDev ? dev(n) : host.data();
      auto data = pattern(n, static_cast<int>(n));
      fake_->devWrite(s, data.data(), n);
      const size_t copies = fake_->log.size(), rts = ipcRtsCount();
      Status ss, rs;
      size_t got = 0;
      xfer(s, n, r, n, &ss, &rs, &got);
      EXPECT_EQ(ss, Status::Ok);
      EXPECT_EQ(rs, Status::Ok);
      EXPECT_EQ(got, n);
      EXPECT_EQ(read(r, n, recvDev), data);
      EXPECT_EQ(ipcRtsCount(), rts + 1) << "not an IPC rendezvous";
      // One copy, straight from the mapping into the receive buffer: no staging, no chunks.
      ASSERT_EQ(fake_->log.size(), copies + 1);
      EXPECT_EQ(fake_->log.back().src, reinterpret_cast<uintptr_t>(s));
      EXPECT_EQ(fake_->log.back().dst, reinterpret_cast<uintptr_t>(r));
      EXPECT_EQ(fake_->log.back().n, n);
    }
  }
  // The RTS says what it is: memory type Cuda, no rkey bytes, an IpcRts after it.
  for (const Msg& m : loop_->sent) {
    if (m.id != wire::kRts) continue;
    wire::RtsHeader h;
    memcpy(&h, m.bytes.data(), sizeof h);
    EXPECT_EQ(h.memType, static_cast<uint8_t>(memory::MemType::Cuda));
    EXPECT_EQ(h.rkeyLen, 0);
    EXPECT_EQ(m.bytes.size(), sizeof h + sizeof(wire::IpcRts));
  }
}

TEST_F(GpuRndv, IpcHandlesAreExportedAndOpenedOncePerAllocation) {
  start(true);
  const size_t n = 1 << 20;
  void* s = dev(4 * n);  // one allocation, messages from several offsets in it
  void* r = dev(n);
  auto data = pattern(4 * n, 3);
  fake_->devWrite(s, data.data(), 4 * n);
  for (size_t off : {size_t{0}, n, 3 * n + 5, size_t{0}}) {
    const size_t len = off == 3 * n + 5 ? n - 5 : n;
    Status ss, rs;
    xfer(static_cast<char*>(s) + off, len, r, n, &ss, &rs);
    ASSERT_EQ(rs, Status::Ok);
    auto got = read(r, len, true);
    EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin() + off)) << off;
  }
  EXPECT_EQ(fake_->ipcGets, 1u) << "the export cache asked the driver again";
  EXPECT_EQ(fake_->ipcOpens, 1u) << "the import cache opened the mapping again";
  EXPECT_EQ(ipcRtsCount(), 4u);
}

TEST_F(GpuRndv, FreedAndReallocatedBufferGetsANewMappingNotStaleData) {
  start(true);
  const size_t n = 1 << 20;
  void* s = dev(n);
  void* r = dev(n);
  auto first = pattern(n, 1), second = pattern(n, 2);
  fake_->devWrite(s, first.data(), n);
  Status ss, rs;
  xfer(s, n, r, n, &ss, &rs);
  ASSERT_EQ(rs, Status::Ok);
  ASSERT_EQ(read(r, n, true), first);
  ASSERT_EQ(fake_->ipcOpens, 1u);
  // The application frees the buffer and gets a new one at the same address (the double keeps
  // the old bytes behind the receiver's open mapping, as CUDA does).
  fake_->devFree(s);
  forget(s);
  void* again = fake_->devAllocAt(s, n);
  ASSERT_EQ(again, s) << "could not reallocate at the same address";
  devs_.push_back(again);
  fake_->devWrite(again, second.data(), n);
  xfer(again, n, r, n, &ss, &rs);
  ASSERT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), second) << "stale data through the old mapping";
  EXPECT_EQ(fake_->ipcGets, 2u) << "the old handle was sent again";
  EXPECT_EQ(fake_->ipcOpens, 2u);
  EXPECT_EQ(fake_->ipcCloses, 1u) << "the stale mapping stays open";
  EXPECT_EQ(fake_->liveIpcMappings(), 1u);
}

TEST_F(GpuRndv, IpcUnexpectedRtsKeepsItsReference) {
  start(true);
  const size_t n = 300000;
  void* s = dev(n);
  void* r = dev(n);
  auto data = pattern(n, 4);
  fake_->devWrite(s, data.data(), n);
  Status ss, rs;
  xfer(s, n, r, n, &ss, &rs, nullptr, /*unexpected=*/true);
  EXPECT_EQ(ss, Status::Ok);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), data);
  EXPECT_EQ(ipcRtsCount(), 1u);
  EXPECT_EQ(fake_->ipcOpens, 1u);
}

TEST_F(GpuRndv, IpcTruncatesToTheReceiveBuffer) {
  start(true);
  const size_t n = 500000, cap = 200001;
  void* s = dev(n);
  void* r = dev(cap + 4096);
  auto data = pattern(n, 5);
  fake_->devWrite(s, data.data(), n);
  std::vector<char> guard(4096, 0x11);
  fake_->devWrite(static_cast<char*>(r) + cap, guard.data(), guard.size());
  Status ss, rs;
  size_t got = 0;
  xfer(s, n, r, cap, &ss, &rs, &got);
  EXPECT_EQ(ss, Status::Ok);
  EXPECT_EQ(rs, Status::ErrTruncate);
  EXPECT_EQ(got, cap);
  EXPECT_EQ(read(r, cap, true), std::vector<char>(data.begin(), data.begin() + cap));
  EXPECT_EQ(read(static_cast<char*>(r) + cap, guard.size(), true), guard) << "wrote past the buffer";
}

TEST_F(GpuRndv, IpcFallsBackToThePipelineWhenOpenOrCopyFails) {
  start(true, 64 * 1024);
  const size_t n = 5 * 64 * 1024 + 1;
  void* s = dev(n);
  void* r = dev(n);
  auto data = pattern(n, 6);
  fake_->devWrite(s, data.data(), n);
  // The mapping cannot be opened: the receiver answers CTS Copy, the sender pipelines.
  fake_->failIpcOpen = true;
  Status ss, rs;
  xfer(s, n, r, n, &ss, &rs);
  EXPECT_EQ(ss, Status::Ok);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), data);
  EXPECT_EQ(fake_->ipcOpens, 0u);
  EXPECT_EQ(ipcRtsCount(), 1u);
  fake_->failIpcOpen = false;
  // The IPC copy itself is refused: the same fallback, the mapping is given back.
  std::vector<char> zero(n, 0);
  fake_->devWrite(r, zero.data(), n);
  fake_->failCopyAfter = 0;
  xfer(s, n, r, n, &ss, &rs);
  EXPECT_EQ(ss, Status::Ok);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), data);
  EXPECT_EQ(ipcRtsCount(), 2u);
}

TEST_F(GpuRndv, IpcOffOrOtherNodeMeansNoHandles) {
  start(true, 0, /*ipc=*/false);
  const size_t n = 1 << 20;
  void* s = dev(n);
  void* r = dev(n);
  auto data = pattern(n, 7);
  fake_->devWrite(s, data.data(), n);
  Status ss, rs;
  xfer(s, n, r, n, &ss, &rs);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), data);
  EXPECT_EQ(fake_->ipcGets, 0u);
  EXPECT_EQ(ipcRtsCount(), 0u);
}

TEST_F(GpuRndv, MalformedIpcRtsIsDropped) {
  start(true);
  const size_t n = 1 << 20;
  void* r = dev(n);
  core::Request* rr = nullptr;
  ASSERT_EQ(irecv(*world_, world_->ctx, r, n, 1, 9, &rr), Status::Ok);
  struct {
    wire::RtsHeader h;
    wire::IpcRts x;
  } m{};
  m.h.m.ctx = world_->ctx;
  m.h.m.src = 1;
  m.h.m.tag = 9;
  m.h.sreq = 0x99;
  m.h.size = n;
  m.h.mode = static_cast<uint8_t>(wire::RndvMode::Ipc);
  m.h.memType = static_cast<uint8_t>(memory::MemType::Cuda);
  m.x.base = 0x100000;
  m.x.allocSize = n;
  m.x.offset = 1;  // one byte past the allocation's end
  Engine::deliver(&engine(), 1, wire::kRts, &m, sizeof m);
  m.x.offset = 0;
  m.x.allocSize = ~uint64_t{0};  // wraps
  m.x.base = ~uint64_t{0} - 10;
  Engine::deliver(&engine(), 1, wire::kRts, &m, sizeof m);
  m.x.base = 0x100000;
  m.x.allocSize = n;
  Engine::deliver(&engine(), 1, wire::kRts, &m, sizeof m.h + 10);  // IpcRts cut short
  m.h.memType = static_cast<uint8_t>(memory::MemType::Host);
  Engine::deliver(&engine(), 1, wire::kRts, &m, sizeof m);  // Ipc for host memory
  for (int i = 0; i < 8; ++i) core::progress();
  EXPECT_FALSE(rr->complete) << "a malformed RTS was taken";
  EXPECT_EQ(fake_->ipcOpens, 0u);
  ASSERT_EQ(cancel(rr), Status::Ok);
  EXPECT_TRUE(rr->complete);
  core::requestRelease(rr);
}

// ---- the pipeline (no IPC: another node) -------------------------------------------------------

constexpr size_t kChunk = 32 * 1024;

// The copies of the log that read from [base, base+n) (from == true) or write into it, as
// (offset, length) in issue order.
std::vector<std::pair<size_t, size_t>> copiesOf(const FakeDriver& f, size_t from, const void* p,
                                                size_t n, bool src) {
  std::vector<std::pair<size_t, size_t>> out;
  const uintptr_t b = reinterpret_cast<uintptr_t>(p);
  for (size_t i = from; i < f.log.size(); ++i) {
    const uintptr_t a = src ? f.log[i].src : f.log[i].dst;
    if (f.log[i].n && a >= b && a < b + n) out.emplace_back(a - b, f.log[i].n);
  }
  return out;
}

void expectChunks(const std::vector<std::pair<size_t, size_t>>& got, size_t n, const char* what) {
  const size_t k = (n + kChunk - 1) / kChunk;
  ASSERT_EQ(got.size(), k) << what << ": " << n << " bytes";
  for (size_t i = 0; i < k; ++i) {
    EXPECT_EQ(got[i].first, i * kChunk) << what << " chunk " << i << " out of order";
    EXPECT_EQ(got[i].second, std::min(kChunk, n - i * kChunk)) << what << " chunk " << i;
  }
}

struct Dir {
  bool sendDev, recvDev;
};
class GpuPipe : public GpuRndv, public ::testing::WithParamInterface<Dir> {};

TEST_P(GpuPipe, EveryChunkBoundaryInOrder) {
  start(false, kChunk);
  const Dir d = GetParam();
  for (size_t k : {size_t{3}, size_t{4}, size_t{7}}) {
    for (size_t n : {k * kChunk - 1, k * kChunk, k * kChunk + 1}) {
      SCOPED_TRACE(n);
      std::vector<char> hs(n), hr(n, 0);
      void* s = d.sendDev ? dev(n) : hs.data();
      void* r = d.recvDev ? dev(n) : hr.data();
      auto data = pattern(n, static_cast<int>(k));
      if (d.sendDev) fake_->devWrite(s, data.data(), n);
      else memcpy(s, data.data(), n);
      const size_t from = fake_->log.size();
      loop_->refuse = 3;  // the transport is full now and then
      Status ss, rs;
      size_t got = 0;
      xfer(s, n, r, n, &ss, &rs, &got);
      EXPECT_EQ(ss, Status::Ok);
      EXPECT_EQ(rs, Status::Ok);
      EXPECT_EQ(got, n);
      EXPECT_EQ(read(r, n, d.recvDev), data);
      // Device -> host chunk by chunk at the sender, host -> device chunk by chunk at the
      // receiver, each in order, never the whole message at once.
      if (d.sendDev) expectChunks(copiesOf(*fake_, from, s, n, true), n, "send");
      if (d.recvDev) expectChunks(copiesOf(*fake_, from, r, n, false), n, "receive");
    }
  }
  EXPECT_EQ(fake_->ipcGets, 0u);
}

INSTANTIATE_TEST_SUITE_P(Kinds, GpuPipe,
                         ::testing::Values(Dir{true, true}, Dir{true, false}, Dir{false, true}),
                         [](const auto& info) {
                           return std::string(info.param.sendDev ? "D" : "H") + "to" +
                                  (info.param.recvDev ? "D" : "H");
                         });

// ---- GPUDirect RDMA ----------------------------------------------------------------------

// The peer's transport registers device memory: the host rendezvous moves device buffers by
// one-sided get (or put) straight between the two buffers: no staging copy through the driver
// on either side, the device buffers themselves registered, the RTS saying Cuda.
TEST_F(GpuRndv, GdrMovesDeviceBuffersZeroCopyByGetOrPut) {
  for (const char* mode : {"auto", "put"}) {
    setenv("RRT_RNDV_PROTO", mode, 1);
    start(false, 0, true, /*gdr=*/true);
    for (int kind = 0; kind < 3; ++kind) {  // D->D, D->H, H->D
      const bool sendDev = kind != 2, recvDev = kind != 1;
      for (size_t n : {size_t{65537}, size_t{(3u << 20) + 3}}) {
        SCOPED_TRACE(std::string(mode) + " kind " + std::to_string(kind) + " " + std::to_string(n));
        std::vector<char> hs(n), hr(n, 0);
        void* s = sendDev ? dev(n) : hs.data();
        void* r = recvDev ? dev(n) : hr.data();
        auto data = pattern(n, kind + static_cast<int>(n));
        if (sendDev) fake_->devWrite(s, data.data(), n);
        else memcpy(s, data.data(), n);
        const size_t copies = fake_->log.size(), regs = loop_->deviceRegs;
        const int moved = loop_->gets + loop_->puts;
        Status ss, rs;
        size_t got = 0;
        xfer(s, n, r, n, &ss, &rs, &got);
        EXPECT_EQ(ss, Status::Ok);
        EXPECT_EQ(rs, Status::Ok);
        EXPECT_EQ(got, n);
        EXPECT_EQ(read(r, n, recvDev), data);
        EXPECT_EQ(fake_->log.size(), copies) << "a driver copy: staged, not zero-copy";
        EXPECT_EQ(loop_->deviceRegs, static_cast<int>(regs) + sendDev + recvDev);
        EXPECT_GE(loop_->gets + loop_->puts, moved + 3 + (n > 65537 ? 0 : -2));
        const wire::RtsHeader h = rtsSent().back();
        EXPECT_EQ(h.memType, static_cast<uint8_t>(sendDev ? memory::MemType::Cuda
                                                          : memory::MemType::Host));
        EXPECT_EQ(h.mode, static_cast<uint8_t>(strcmp(mode, "put") ? wire::RndvMode::Get
                                                                   : wire::RndvMode::Put));
        EXPECT_EQ(loop_->liveRegs, 0) << "a registration not given back";
      }
    }
    TearDown();
  }
  unsetenv("RRT_RNDV_PROTO");
  config::reload();
}

// Put rendezvous: the receiver registered its buffer and sent the CTS, then the sender's
// registration fails: the send ends with the error and the receiver is told (a FIN with it),
// never left waiting for a put that will not come.
TEST_F(GpuRndv, PutRegistrationFailureAfterTheCtsEndsBothSides) {
  setenv("RRT_RNDV_PROTO", "put", 1);
  start(false, 0, true, /*gdr=*/true);
  const size_t n = 1 << 20;
  std::vector<char> s(n, 3), r(n, 0);
  loop_->refuseRegAfter = 1;  // the receiver's succeeds, the sender's fails
  Status ss, rs;
  xfer(s.data(), n, r.data(), n, &ss, &rs);  // a hang fails inside xfer
  EXPECT_NE(ss, Status::Ok);
  EXPECT_NE(rs, Status::Ok);
  EXPECT_EQ(loop_->liveRegs, 0);
  unsetenv("RRT_RNDV_PROTO");
}

// A transport that advertises GPUDirect but refuses the registration (no dmabuf, no
// peermem): the message still arrives, by the pipelined copy, and later ones go pipelined at
// once (the capability went with the refusal).
TEST_F(GpuRndv, GdrRefusedFallsBackToThePipeline) {
  start(false, 0, true, /*gdr=*/true);
  loop_->refuseDevice = true;
  const size_t n = (2u << 20) + 5;
  void* s = dev(n);
  void* r = dev(n);
  auto data = pattern(n, 4);
  fake_->devWrite(s, data.data(), n);
  for (int i = 0; i < 2; ++i) {
    const size_t copies = fake_->log.size();
    Status ss, rs;
    xfer(s, n, r, n, &ss, &rs);
    EXPECT_EQ(ss, Status::Ok);
    EXPECT_EQ(rs, Status::Ok);
    EXPECT_EQ(read(r, n, true), data);
    EXPECT_GT(fake_->log.size(), copies) << "no pipelined copies";
    EXPECT_EQ(rtsSent().back().mode, static_cast<uint8_t>(wire::RndvMode::Copy));
  }
  EXPECT_EQ(loop_->deviceRegs, 0);
  EXPECT_EQ(loop_->liveRegs, 0);
}

// The receiver registered its device buffer (staging dropped) but the get is refused: the
// receive goes back to its host staging and takes the pipelined copy; the data is right.
TEST_F(GpuRndv, GdrGetRefusedAfterRegistrationStagesAgain) {
  start(false, 0, true, /*gdr=*/true);
  loop_->refuseGets = true;
  const size_t n = (1u << 20) + 7;
  std::vector<char> hs(n);
  auto data = pattern(n, 6);
  memcpy(hs.data(), data.data(), n);
  void* r = dev(n);
  Status ss, rs;
  xfer(hs.data(), n, r, n, &ss, &rs);
  EXPECT_EQ(ss, Status::Ok);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), data);
  EXPECT_EQ(loop_->deviceRegs, 1);
  EXPECT_EQ(loop_->liveRegs, 0);
}

TEST_F(GpuRndv, PipelineOverlapsTheCopyOfTheNextChunkWithTheTransferOfThisOne) {
  start(false, kChunk);
  fake_->manual = true;  // copies run only when the test says (drive: one per progress)
  const size_t n = 6 * kChunk + 100;
  void* s = dev(n);
  std::vector<char> hr(n, 0);
  auto data = pattern(n, 8);
  fake_->devWrite(s, data.data(), n);
  const size_t from = fake_->log.size(), sentFrom = loop_->sent.size();
  Status ss, rs;
  xfer(s, n, hr.data(), n, &ss, &rs);
  ASSERT_EQ(rs, Status::Ok);
  EXPECT_EQ(hr, data);
  // When the first Data fragment of chunk i went out, the copy of chunk i+1 had been issued.
  const auto copies = copiesOf(*fake_, from, s, n, true);
  expectChunks(copies, n, "send");
  const size_t k = copies.size();
  std::vector<bool> seen(k, false);
  for (size_t m = sentFrom; m < loop_->sent.size(); ++m) {
    const Msg& msg = loop_->sent[m];
    if (msg.id != wire::kData) continue;
    wire::DataHeader dh;
    memcpy(&dh, msg.bytes.data(), sizeof dh);
    const size_t i = dh.offset / kChunk;
    if (seen[i]) continue;
    seen[i] = true;
    if (i + 1 < k) {
      const auto issued = copiesOf(*fake_, from, s, n, true);
      size_t before = 0;  // copies of s issued before this fragment was sent
      for (size_t j = from; j < msg.copiesIssued; ++j) {
        const uintptr_t a = fake_->log[j].src, b = reinterpret_cast<uintptr_t>(s);
        before += fake_->log[j].n && a >= b && a < b + n;
      }
      EXPECT_GE(before, i + 2) << "chunk " << i << " went out before chunk " << i + 1
                               << "'s copy was issued";
    }
  }
  for (size_t i = 0; i < k; ++i) EXPECT_TRUE(seen[i]) << "chunk " << i << " never sent";
}

TEST_F(GpuRndv, PipelineTruncates) {
  start(false, kChunk);
  const size_t n = 5 * kChunk + 1, cap = 3 * kChunk - 1;
  void* s = dev(n);
  void* r = dev(cap);
  auto data = pattern(n, 9);
  fake_->devWrite(s, data.data(), n);
  const size_t from = fake_->log.size();
  Status ss, rs;
  size_t got = 0;
  xfer(s, n, r, cap, &ss, &rs, &got);
  EXPECT_EQ(ss, Status::Ok);
  EXPECT_EQ(rs, Status::ErrTruncate);
  EXPECT_EQ(got, cap);
  EXPECT_EQ(read(r, cap, true), std::vector<char>(data.begin(), data.begin() + cap));
  expectChunks(copiesOf(*fake_, from, s, n, true), cap, "send (only what the receiver takes)");
}

TEST_F(GpuRndv, DriverFailureMidPipelineEndsBothSidesWithAnError) {
  start(false, kChunk);
  const size_t n = 6 * kChunk;
  for (int side = 0; side < 2; ++side) {
    SCOPED_TRACE(side == 0 ? "sender's device->host copy fails" : "receiver's host->device copy fails");
    std::vector<char> hs(n), hr(n);
    void* s = side == 0 ? dev(n) : hs.data();
    void* r = side == 0 ? static_cast<void*>(hr.data()) : dev(n);
    auto data = pattern(n, 10);
    if (side == 0) fake_->devWrite(s, data.data(), n);
    else memcpy(s, data.data(), n);
    fake_->failCopyAfter = 2;  // the third copy (chunk 2) fails
    Status ss, rs;
    xfer(s, n, r, n, &ss, &rs);
    EXPECT_NE(rs, Status::Ok) << "the receive claims data it does not have";
    if (side == 0) {
      EXPECT_NE(ss, Status::Ok);
    }
    fake_->failCopyAfter = -1;
  }
  // The engine is still usable afterwards.
  void* s = dev(n);
  void* r = dev(n);
  auto data = pattern(n, 11);
  fake_->devWrite(s, data.data(), n);
  Status ss, rs;
  xfer(s, n, r, n, &ss, &rs);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), data);
}

// ---- memory-type cache: a cached "device" answer for memory that is host memory now ---------

TEST_F(GpuRndv, HostMemoryAtAFreedDeviceAddressIsNotTakenForDevice) {
  start(true);
  const size_t n = 1 << 20;
  void* s = dev(n);
  void* r = dev(n);
  auto data = pattern(n, 12);
  fake_->devWrite(s, data.data(), n);
  Status ss, rs;
  xfer(s, n, r, n, &ss, &rs);
  ASSERT_EQ(rs, Status::Ok);
  ASSERT_EQ(gpu::memTypeCache()->classify(s, n), memory::MemType::Cuda);
  // Freed; host memory appears at the same address (the cache was never told).
  fake_->devFree(s);
  forget(s);
  void* h = mmap(s, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(h, s);
  auto hostData = pattern(n, 13);
  memcpy(h, hostData.data(), n);
  const uint64_t gets = fake_->ipcGets;
  xfer(h, n, r, n, &ss, &rs);
  EXPECT_EQ(ss, Status::Ok);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(read(r, n, true), hostData);
  EXPECT_EQ(fake_->ipcGets, gets) << "tried to export host memory as a device buffer";
  EXPECT_EQ(gpu::memTypeCache()->classify(h, n), memory::MemType::Host) << "cache not corrected";
  // The same as a receive buffer.
  std::vector<char> zero(n, 0);
  memcpy(h, zero.data(), n);
  xfer(r, n, h, n, &ss, &rs);
  EXPECT_EQ(rs, Status::Ok);
  EXPECT_EQ(memcmp(h, hostData.data(), n), 0);
  munmap(h, n);
}

}  // namespace
}  // namespace rrt::proto
