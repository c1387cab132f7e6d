// Collectives on device buffers that run on the device (coll::runsOnDevice): allreduce and reduce
// by every algorithm, 2-5 ranks on one node (the in-memory p2p of coll_sim, whose message bytes
// move through the driver), device buffers from the driver double. The reductions must run as
// Driver::reduce calls (the double implements each op with the host kernels' semantics, on device
// memory the CPU cannot touch), scratch must be device memory, no host mirror may be made, and
// every result must equal the host reference (integer-valued inputs: exact in every type).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/coll/coll.h"
#include "runtime/coll/device_stage.h"
#include "runtime/coll/op.h"
#include "runtime/coll/selection.h"
#include "runtime/core/config.h"
#include "runtime/core/request.h"
#include "runtime/gpu/gpu.h"
#include "tests/unit/coll_sim.h"
#include "tests/unit/gpu_fake_driver.h"

namespace rrt::coll {
namespace {

using gpu::test::FakeDriver;

struct Cfg {
  rrt_op_t op;
  rrt_datatype_t type;
  size_t size;
  const char* name;
};

const Cfg kCfgs[] = {
    {RRT_SUM, RRT_FLOAT, 4, "sum/float"},       {RRT_MAX, RRT_INT32, 4, "max/int32"},
    {RRT_PROD, RRT_INT64, 8, "prod/int64"},     {RRT_SUM, RRT_FLOAT16, 2, "sum/float16"},
    {RRT_SUM, RRT_BFLOAT16, 2, "sum/bfloat16"}, {RRT_BXOR, RRT_UINT8, 1, "bxor/uint8"},
    {RRT_MIN, RRT_DOUBLE, 8, "min/double"},
};

// Element i of rank r: a small integer (exact in float16 / bfloat16 and their sums over 5 ranks).
std::vector<char> input(const Cfg& c, int r, size_t n) {
  std::vector<char> v(n * c.size);
  for (size_t i = 0; i < n; ++i) {
    const int x = static_cast<int>((i * 7 + static_cast<size_t>(r) * 3) % 9) + 1;
    char* p = v.data() + i * c.size;
    switch (c.type) {
      case RRT_FLOAT: { float f = static_cast<float>(x); memcpy(p, &f, 4); break; }
      case RRT_DOUBLE: { double d = x - 4.5; memcpy(p, &d, 8); break; }
      case RRT_INT32: { int32_t k = x * (r % 2 ? -1 : 1); memcpy(p, &k, 4); break; }
      case RRT_INT64: { int64_t k = x % 3 + 1; memcpy(p, &k, 8); break; }
      case RRT_FLOAT16: { uint16_t h = floatToHalf(static_cast<float>(x)); memcpy(p, &h, 2); break; }
      case RRT_BFLOAT16: { uint16_t h = floatToBf16(static_cast<float>(x)); memcpy(p, &h, 2); break; }
      default: p[0] = static_cast<char>(x * 37 + r); break;
    }
  }
  return v;
}

// The host reference: in_0 op in_1 op ... op in_{p-1} with the host kernels.
std::vector<char> reference(const Cfg& c, int p, size_t n) {
  Kernel k = kernelFor(c.op, c.type);
  std::vector<char> acc = input(c, p - 1, n);
  for (int r = p - 2; r >= 0; --r) {
    auto in = input(c, r, n);
    k(in.data(), acc.data(), n);  // acc = in_r op acc
  }
  return acc;
}

class GpuColl : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_ = new FakeDriver;
    gpu::installDriver(fake_);
  }
  void TearDown() override {
    gpu::installDriver(nullptr);
    EXPECT_EQ(fake_->memAllocs, fake_->memFrees) << "device scratch leaked";
    delete fake_;
  }
  FakeDriver* fake_ = nullptr;
};

void run(FakeDriver* fake, CollKind kind, const char* algo, const Cfg& c, int p, size_t n,
         bool inplace) {
  setenv(kindEnvName(kind), algo, 1);
  reloadSelection();
  const std::string what = std::string(algo) + " " + c.name + " p=" + std::to_string(p) +
                           " n=" + std::to_string(n) + (inplace ? " inplace" : "");
  sim::World w(p, sim::Mode::Rendezvous, static_cast<uint32_t>(p * 31 + n));
  const int root = kind == CollKind::Reduce ? static_cast<int>(n % static_cast<size_t>(p)) : 0;
  const size_t bytes = n * c.size;
  std::vector<void*> in(static_cast<size_t>(p)), out(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    const size_t u = static_cast<size_t>(r);
    in[u] = fake->devAlloc(bytes);
    out[u] = fake->devAlloc(bytes);
    auto v = input(c, r, n);
    fake->devWrite(in[u], v.data(), bytes);
    if (inplace) fake->devWrite(out[u], v.data(), bytes);
  }
  const uint64_t reduces = fake->reduces, hostAllocs = fake->hostAllocs;
  std::vector<core::Request*> reqs;
  for (int r = 0; r < p; ++r) {
    const size_t u = static_cast<size_t>(r);
    CollArgs a;
    a.kind = kind;
    const bool ip = inplace && (kind != CollKind::Reduce || r == root);
    a.sbuf = ip ? RRT_IN_PLACE : in[u];
    a.rbuf = ip ? out[u] : out[u];
    if (ip && kind == CollKind::Reduce) a.sbuf = RRT_IN_PLACE;
    a.count = n;
    a.typeSize = c.size;
    a.root = root;
    ASSERT_EQ(makeReducer(c.op, c.type, &a.reducer), Status::Ok);
    core::Request* q = nullptr;
    ASSERT_EQ(start(w.comm(r), std::move(a), &q), Status::Ok) << what;
    reqs.push_back(q);
  }
  ASSERT_TRUE(w.waitAll(reqs)) << what << ": deadlock";
  for (core::Request* q : reqs) {
    EXPECT_EQ(q->status.error, RRT_SUCCESS) << what;
    core::requestRelease(q);
  }
  EXPECT_GT(fake->reduces, reduces) << what << ": the reductions did not run on the device";
  EXPECT_EQ(fake->hostAllocs, hostAllocs) << what << ": host mirrors / staging were made";
  const auto want = reference(c, p, n);
  for (int r = 0; r < p; ++r) {
    const size_t u = static_cast<size_t>(r);
    if (kind == CollKind::Reduce && r != root) continue;
    std::vector<char> got(bytes);
    fake->devRead(got.data(), out[u], bytes);
    EXPECT_EQ(got, want) << what << " rank " << r;
  }
  for (size_t u = 0; u < in.size(); ++u) {
    fake->devFree(in[u]);
    fake->devFree(out[u]);
  }
  unsetenv(kindEnvName(kind));
  reloadSelection();
}

TEST_F(GpuColl, AllreduceEveryAlgorithmRunsOnTheDevice) {
  for (const char* algo : {"recursive_doubling", "rabenseifner", "ring"})
    for (const Cfg& c : kCfgs)
      for (int p : {2, 3, 4, 5})
        for (size_t n : {size_t{1}, size_t{1000}, size_t{40000}})
          for (bool inplace : {false, true}) run(fake_, CollKind::Allreduce, algo, c, p, n, inplace);
}

TEST_F(GpuColl, ReduceEveryAlgorithmRunsOnTheDevice) {
  for (const char* algo : {"binomial", "rabenseifner"})
    for (const Cfg& c : kCfgs)
      for (int p : {2, 3, 5})
        for (size_t n : {size_t{1}, size_t{1000}, size_t{40000}})
          for (bool inplace : {false, true}) run(fake_, CollKind::Reduce, algo, c, p, n, inplace);
}

// Runs an allreduce of c over p ranks on device buffers; returns the requests' errors and
// rank 0's result.
std::vector<int> allreduce(FakeDriver* fake, const Cfg& c, int p, size_t n, std::vector<char>* out0) {
  const size_t bytes = n * c.size;
  sim::World w(p, sim::Mode::Eager, 7);
  std::vector<void*> in, out;
  std::vector<core::Request*> reqs;
  for (int r = 0; r < p; ++r) {
    in.push_back(fake->devAlloc(bytes));
    out.push_back(fake->devAlloc(bytes));
    auto v = input(c, r, n);
    fake->devWrite(in.back(), v.data(), bytes);
    CollArgs a;
    a.kind = CollKind::Allreduce;
    a.sbuf = in.back();
    a.rbuf = out.back();
    a.count = n;
    a.typeSize = c.size;
    EXPECT_EQ(makeReducer(c.op, c.type, &a.reducer), Status::Ok);
    core::Request* q = nullptr;
    EXPECT_EQ(start(w.comm(r), std::move(a), &q), Status::Ok);
    reqs.push_back(q);
  }
  std::vector<int> errors;
  EXPECT_TRUE(w.waitAll(reqs)) << "hangs";
  for (core::Request* q : reqs) {
    errors.push_back(q->complete ? q->status.error : -999);
    if (q->complete) core::requestRelease(q);
  }
  out0->resize(bytes);
  fake->devRead(out0->data(), out[0], bytes);
  for (size_t u = 0; u < in.size(); ++u) {
    fake->devFree(in[u]);
    fake->devFree(out[u]);
  }
  return errors;
}

TEST_F(GpuColl, AnOpTheDeviceLacksFallsBackToMirrors) {
  fake_->reduceOnDevice = false;  // a build without the kernels
  std::vector<char> got;
  auto errors = allreduce(fake_, kCfgs[0], 3, 500, &got);
  for (int e : errors) EXPECT_EQ(e, RRT_SUCCESS);
  EXPECT_EQ(got, reference(kCfgs[0], 3, 500));
  EXPECT_EQ(fake_->reduces, 0u);
  EXPECT_GT(fake_->hostAllocs, 0u) << "no mirrors: how did it reduce?";
}

TEST_F(GpuColl, AFailingDeviceStepEndsTheCollectiveWithAnError) {
  // The device reduction step fails (a kernel launch error) after the device path was chosen.
  std::vector<char> got;
  fake_->failReduces = true;
  auto errors = allreduce(fake_, kCfgs[1], 2, 5000, &got);
  bool anyError = false;
  for (int e : errors) {
    EXPECT_NE(e, -999) << "a rank never completed";
    anyError |= e != RRT_SUCCESS;
  }
  EXPECT_TRUE(anyError) << "a failed device step went unnoticed";
}

// Blocking collectives take their direct form unless a buffer the rank touches is device
// memory (engine.cc: run); the test is hasDeviceBuffer, with GPU support on.
TEST_F(GpuColl, OnlyBuffersTheRankTouchesDecideTheDevicePath) {
  sim::World w(4, sim::Mode::Eager);
  const size_t n = 16;
  void* dev = fake_->devAlloc(4 * n * 4);
  std::vector<char> host(4 * n * 4);
  auto args = [&](CollKind k, const void* s, void* r) {
    CollArgs a;
    a.kind = k;
    a.sbuf = s;
    a.rbuf = r;
    a.count = n;
    a.typeSize = 4;
    a.blockBytes = n * 4;
    a.root = 2;
    return a;
  };
  const CollKind kAllreduce = CollKind::Allreduce, kReduce = CollKind::Reduce;
  EXPECT_FALSE(hasDeviceBuffer(w.comm(0), args(kAllreduce, host.data(), host.data() + 64)));
  EXPECT_TRUE(hasDeviceBuffer(w.comm(0), args(kAllreduce, dev, host.data())));
  EXPECT_TRUE(hasDeviceBuffer(w.comm(0), args(kAllreduce, host.data(), dev)));
  EXPECT_TRUE(hasDeviceBuffer(w.comm(0), args(kAllreduce, RRT_IN_PLACE, dev)));
  // A reduce's receive buffer counts at the root only; a scatter's send buffer likewise.
  EXPECT_FALSE(hasDeviceBuffer(w.comm(0), args(kReduce, host.data(), dev)));
  EXPECT_TRUE(hasDeviceBuffer(w.comm(2), args(kReduce, host.data(), dev)));
  EXPECT_FALSE(hasDeviceBuffer(w.comm(1), args(CollKind::Scatter, dev, host.data())));
  EXPECT_TRUE(hasDeviceBuffer(w.comm(2), args(CollKind::Scatter, dev, host.data())));
  EXPECT_FALSE(hasDeviceBuffer(w.comm(0), args(CollKind::Barrier, dev, dev)));
  // GPU support off: nothing is classified.
  gpu::installDriver(nullptr);
  EXPECT_FALSE(hasDeviceBuffer(w.comm(0), args(kAllreduce, dev, dev)));
  gpu::installDriver(fake_);
  fake_->devFree(dev);
}

}  // namespace
}  // namespace rrt::coll
