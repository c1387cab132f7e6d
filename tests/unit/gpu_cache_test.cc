// Memory-type cache, IPC handle caches and GPU protocol selection against the driver double.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "runtime/gpu/ipc_cache.h"
#include "runtime/gpu/protocol.h"
#include "runtime/memory/mem_type_cache.h"
#include "tests/unit/gpu_fake_driver.h"

using rrt::Status;
using rrt::gpu::IpcExportCache;
using rrt::gpu::IpcImportCache;
using rrt::gpu::IpcKey;
using rrt::gpu::PointerInfo;
using rrt::gpu::test::FakeDriver;
using rrt::memory::MemType;
using rrt::memory::MemTypeCache;
using rrt::memory::Region;

namespace {

Status query(void* arg, const void* p, Region* out) {
  PointerInfo info;
  Status s = static_cast<FakeDriver*>(arg)->pointerInfo(p, &info);
  out->type = info.type;
  out->base = info.base;
  out->size = info.size;
  out->id = info.bufferId;
  return s;
}

TEST(MemTypeCache, DeviceFoundOnceThenCached) {
  FakeDriver d;
  MemTypeCache c(&query, &d);
  char* dev = static_cast<char*>(d.devAlloc(1 << 20));
  Region r;
  EXPECT_EQ(c.classify(dev, 100, &r), MemType::Cuda);
  EXPECT_EQ(r.base, reinterpret_cast<uintptr_t>(dev));
  EXPECT_EQ(r.size, size_t{1} << 20);
  EXPECT_EQ(d.pointerQueries, 1u);
  // Any address inside the allocation: no new query.
  EXPECT_EQ(c.classify(dev + 4096, 8), MemType::Cuda);
  EXPECT_EQ(c.classify(dev + (1 << 20) - 1, 1), MemType::Cuda);
  EXPECT_EQ(d.pointerQueries, 1u);
  EXPECT_EQ(c.deviceEntries(), 1u);
  d.devFree(dev);
}

TEST(MemTypeCache, HostBuffersCostOneQueryPerChunk) {
  FakeDriver d;
  MemTypeCache c(&query, &d);
  std::vector<char> host(1 << 16);
  EXPECT_EQ(c.classify(host.data(), host.size()), MemType::Host);
  const uint64_t q = d.pointerQueries;
  EXPECT_GE(q, 1u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(c.classify(host.data() + i, 1), MemType::Host);
  EXPECT_EQ(d.pointerQueries, q) << "host fast path queried the driver";
  EXPECT_EQ(c.queries(), q);
}

TEST(MemTypeCache, InvalidateOnFreeFindsTheNewAllocation) {
  FakeDriver d;
  MemTypeCache c(&query, &d);
  void* a = d.devAlloc(4096);
  Region r1, r2;
  ASSERT_EQ(c.classify(a, 1, &r1), MemType::Cuda);
  c.invalidate(a, 4096);  // what rrt does when the user frees (or the driver rejects) it
  EXPECT_EQ(c.deviceEntries(), 0u);
  d.devFree(a);
  void* b = d.devAlloc(8192);
  ASSERT_EQ(c.classify(b, 1, &r2), MemType::Cuda);
  EXPECT_NE(r1.id, r2.id);
  EXPECT_EQ(r2.size, 8192u);
  EXPECT_EQ(d.pointerQueries, 2u);
  d.devFree(b);
}

TEST(MemTypeCache, InvalidatedDeviceRangeBecomesHostAgain) {
  FakeDriver d;
  MemTypeCache c(&query, &d);
  void* a = d.devAlloc(4096);
  ASSERT_EQ(c.classify(a, 1), MemType::Cuda);
  d.devFree(a);
  // Stale until told: the entry stays (freed memory is not used by correct programs) ...
  EXPECT_EQ(c.classify(a, 1), MemType::Cuda);
  // ... and after invalidation the driver is asked again.
  c.invalidate(a, 1);
  EXPECT_EQ(c.classify(a, 1), MemType::Host);
}

TEST(MemTypeCache, LargeHostBuffersAreNotCachedBeyondTheLimit) {
  FakeDriver d;
  MemTypeCache c(&query, &d);
  const size_t big = (MemTypeCache::kMaxChunksCached + 2) << MemTypeCache::kChunkShift;
  char* host = static_cast<char*>(malloc(big));
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(c.classify(host, big), MemType::Host);
  EXPECT_EQ(c.classify(host, big), MemType::Host);
  EXPECT_EQ(d.pointerQueries, 2u);  // re-queried: too many chunks to cache
  free(host);
}

TEST(MemTypeCache, ClearForgetsEverything) {
  FakeDriver d;
  MemTypeCache c(&query, &d);
  void* a = d.devAlloc(64);
  int x = 0;
  c.classify(a, 1);
  c.classify(&x, sizeof x);
  c.clear();
  EXPECT_EQ(c.deviceEntries(), 0u);
  c.classify(&x, sizeof x);
  EXPECT_EQ(d.pointerQueries, 3u);
  d.devFree(a);
}

PointerInfo infoOf(FakeDriver& d, void* p) {
  PointerInfo i;
  EXPECT_EQ(d.pointerInfo(p, &i), Status::Ok);
  return i;
}

TEST(IpcExportCache, HandleMadeOncePerAllocation) {
  FakeDriver d;
  IpcExportCache c(&d);
  void* a = d.devAlloc(1 << 16);
  IpcKey k1, k2;
  ASSERT_EQ(c.get(infoOf(d, a), &k1), Status::Ok);
  ASSERT_EQ(c.get(infoOf(d, a), &k2), Status::Ok);
  EXPECT_EQ(d.ipcGets, 1u);
  EXPECT_EQ(memcmp(&k1, &k2, sizeof k1), 0);
  // Freed and reallocated at the same base: new buffer id, new handle.
  PointerInfo old = infoOf(d, a);
  d.devFree(a);
  void* b = d.devAlloc(1 << 16);
  PointerInfo now = infoOf(d, b);
  if (now.base == old.base) {
    ASSERT_EQ(c.get(now, &k2), Status::Ok);
    EXPECT_EQ(d.ipcGets, 2u);
    EXPECT_NE(k2.bufferId, k1.bufferId);
  }
  d.devFree(b);
}

TEST(IpcImportCache, OpensOncePerPeerAllocation) {
  FakeDriver d;
  IpcExportCache ex(&d);
  IpcImportCache im(&d, 8);
  void* a = d.devAlloc(4096);
  IpcKey k;
  ASSERT_EQ(ex.get(infoOf(d, a), &k), Status::Ok);
  void* l1 = nullptr;
  void* l2 = nullptr;
  ASSERT_EQ(im.acquire(1, k, &l1), Status::Ok);
  im.release(1, k.base, l1);
  ASSERT_EQ(im.acquire(1, k, &l2), Status::Ok);
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(d.ipcOpens, 1u);
  im.release(1, k.base, l2);
  // The same allocation seen from another peer number is another mapping.
  ASSERT_EQ(im.acquire(2, k, &l2), Status::Ok);
  EXPECT_EQ(d.ipcOpens, 2u);
  im.release(2, k.base, l2);
  d.devFree(a);
}

TEST(IpcImportCache, StaleHandleIsReplacedAndClosed) {
  FakeDriver d;
  IpcImportCache im(&d, 8);
  IpcExportCache ex(&d);
  void* a = d.devAlloc(4096);
  IpcKey k1;
  ASSERT_EQ(ex.get(infoOf(d, a), &k1), Status::Ok);
  void* l1;
  ASSERT_EQ(im.acquire(3, k1, &l1), Status::Ok);
  im.release(3, k1.base, l1);
  // The peer frees and reallocates: same base (forced here), new id.
  IpcKey k2 = k1;
  void* b = d.devAlloc(4096);
  ASSERT_EQ(ex.get(infoOf(d, b), &k2), Status::Ok);
  k2.base = k1.base;  // what the peer would send after reusing the address
  void* l2;
  ASSERT_EQ(im.acquire(3, k2, &l2), Status::Ok);
  EXPECT_EQ(d.ipcCloses, 1u) << "stale mapping not closed";
  EXPECT_EQ(im.open(), 1u);
  im.release(3, k2.base, l2);
  d.devFree(a);
  d.devFree(b);
}

TEST(IpcImportCache, MappingInUseIsNotClosedUntilReleased) {
  FakeDriver d;
  IpcImportCache im(&d, 1);
  IpcExportCache ex(&d);
  void* a = d.devAlloc(4096);
  void* b = d.devAlloc(4096);
  IpcKey ka, kb;
  ASSERT_EQ(ex.get(infoOf(d, a), &ka), Status::Ok);
  ASSERT_EQ(ex.get(infoOf(d, b), &kb), Status::Ok);
  void *la, *lb;
  ASSERT_EQ(im.acquire(0, ka, &la), Status::Ok);
  ASSERT_EQ(im.acquire(0, kb, &lb), Status::Ok);  // over capacity, but la is held
  EXPECT_EQ(d.ipcCloses, 0u);
  EXPECT_EQ(im.open(), 2u);
  im.release(0, ka.base, la);
  im.release(0, kb.base, lb);
  // Next acquire of a new allocation evicts the least recently used free mapping.
  void* c = d.devAlloc(4096);
  IpcKey kc;
  ASSERT_EQ(ex.get(infoOf(d, c), &kc), Status::Ok);
  void* lc;
  ASSERT_EQ(im.acquire(0, kc, &lc), Status::Ok);
  EXPECT_EQ(im.open(), 1u);
  EXPECT_EQ(d.ipcCloses, 2u);
  im.release(0, kc.base, lc);
  d.devFree(a);
  d.devFree(b);
  d.devFree(c);
}

TEST(IpcImportCache, DropPeerClosesItsMappingsAndErrorsPropagate) {
  FakeDriver d;
  IpcImportCache im(&d, 8);
  IpcExportCache ex(&d);
  void* a = d.devAlloc(4096);
  IpcKey k;
  ASSERT_EQ(ex.get(infoOf(d, a), &k), Status::Ok);
  void* l;
  ASSERT_EQ(im.acquire(5, k, &l), Status::Ok);
  im.release(5, k.base, l);
  im.dropPeer(5);
  EXPECT_EQ(d.liveIpcMappings(), 0u);
  d.devFree(a);
  // The exporter freed the memory: opening its handle fails, as a value.
  EXPECT_EQ(im.acquire(5, k, &l), Status::ErrArg);
  EXPECT_EQ(im.open(), 0u);
}

using rrt::gpu::Proto;
using rrt::gpu::ProtoInput;
using rrt::gpu::selectProto;

TEST(GpuProtocol, Table) {
  ProtoInput in;
  in.bounceLimit = 65536;
  in.bytes = 1 << 20;
  EXPECT_EQ(selectProto(in), Proto::Host);
  in.send = MemType::Cuda;
  EXPECT_EQ(selectProto(in), Proto::Pipelined);
  in.bytes = 65536;
  EXPECT_EQ(selectProto(in), Proto::Bounce);
  in.bytes = 65537;
  in.sameNode = true;
  EXPECT_EQ(selectProto(in), Proto::Pipelined);  // no IPC
  in.ipcUsable = true;
  EXPECT_EQ(selectProto(in), Proto::Ipc);
  in.send = MemType::Host;
  in.recv = MemType::Cuda;
  EXPECT_EQ(selectProto(in), Proto::Pipelined);  // the receiver's device buffer: no IPC source
  in.sameNode = false;
  in.transportZcopyCuda = true;
  EXPECT_EQ(selectProto(in), Proto::GdrRdma);
  in.send = MemType::Cuda;
  EXPECT_EQ(selectProto(in), Proto::GdrRdma);
  EXPECT_STREQ(rrt::gpu::protoName(Proto::Ipc), "cuda/ipc");
}

}  // namespace
