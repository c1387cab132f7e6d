// Device buffers through the whole runtime on the CPU: rrt_init as a world of one rank, the
// driver double installed as the CUDA driver, then point-to-point (device <-> device, device <->
// host, every size class: bounce, pipelined) and collectives on "device" buffers. The double's
// device memory is inaccessible to the CPU outside its own copies, so any place where rrt would
// touch device memory directly crashes the test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include <rrt/rrt.h>

#include "runtime/gpu/gpu.h"
#include "tests/unit/gpu_fake_driver.h"

using rrt::gpu::test::FakeDriver;

namespace {

FakeDriver* gFake = nullptr;

class RrtWorld : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("RRT_CUDA", "off", 1);  // no real driver, whatever this machine has
    ASSERT_EQ(rrt_init(nullptr, nullptr), RRT_SUCCESS);
    gFake = new FakeDriver;
    rrt::gpu::installDriver(gFake);
  }
  void TearDown() override {
    rrt::gpu::installDriver(nullptr);
    EXPECT_EQ(gFake->hostAllocs, gFake->hostFrees) << "staging buffers leaked";
    EXPECT_EQ(rrt_finalize(), RRT_SUCCESS);
    delete gFake;
  }
};
const auto* gEnv = ::testing::AddGlobalTestEnvironment(new RrtWorld);

std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>(i * 13 + seed);
  return v;
}

// A buffer of either kind holding data.
struct Buf {
  bool device;
  size_t n;
  void* p;
  Buf(bool dev, size_t bytes) : device(dev), n(bytes) {
    p = dev ? gFake->devAlloc(bytes) : malloc(bytes ? bytes : 1);
  }
  ~Buf() {
    if (device) gFake->devFree(p);
    else free(p);
  }
  void put(const std::vector<char>& v) {
    if (device) gFake->devWrite(p, v.data(), v.size());
    else if (!v.empty()) memcpy(p, v.data(), v.size());  // data() of an empty vector: null
  }
  std::vector<char> get() const {
    std::vector<char> v(n);
    if (device) gFake->devRead(v.data(), p, n);
    else if (n) memcpy(v.data(), p, n);
    return v;
  }
};

struct Case {
  bool sendDev, recvDev;
};

class GpuP2p : public ::testing::TestWithParam<Case> {};

TEST_P(GpuP2p, EverySizeClass) {
  const Case c = GetParam();
  // 0, tiny, eager, bounce limit and beyond, rendezvous, pipelined with a partial last chunk.
  for (size_t n : {size_t{0}, size_t{1}, size_t{4000}, size_t{65536}, size_t{65537},
                   size_t{300000}, size_t{(3u << 20) + 5}}) {
    Buf s(c.sendDev, n), r(c.recvDev, n);
    auto data = pattern(n, static_cast<int>(n));
    s.put(data);
    r.put(std::vector<char>(n, 0));
    rrt_request_t rq;
    ASSERT_EQ(rrt_irecv(r.p, n, RRT_BYTE, 0, 7, RRT_COMM_WORLD, &rq), RRT_SUCCESS);
    ASSERT_EQ(rrt_send(s.p, n, RRT_BYTE, 0, 7, RRT_COMM_WORLD), RRT_SUCCESS) << n;
    rrt_status_t st;
    ASSERT_EQ(rrt_wait(&rq, &st), RRT_SUCCESS) << n;
    EXPECT_EQ(st.bytes, n);
    EXPECT_EQ(r.get(), data) << "size " << n;
  }
}

TEST_P(GpuP2p, NonBlockingUnexpectedAndSsend) {
  const Case c = GetParam();
  const size_t n = 100000;
  Buf s(c.sendDev, n), r(c.recvDev, n);
  auto data = pattern(n, 5);
  s.put(data);
  rrt_request_t sq, rq;
  // The send goes first: the message waits unexpected, then lands in the (device) buffer.
  ASSERT_EQ(rrt_issend(s.p, n, RRT_BYTE, 0, 3, RRT_COMM_WORLD, &sq), RRT_SUCCESS);
  ASSERT_EQ(rrt_irecv(r.p, n, RRT_BYTE, RRT_ANY_SOURCE, RRT_ANY_TAG, RRT_COMM_WORLD, &rq), RRT_SUCCESS);
  ASSERT_EQ(rrt_wait(&rq, RRT_STATUS_IGNORE), RRT_SUCCESS);
  ASSERT_EQ(rrt_wait(&sq, RRT_STATUS_IGNORE), RRT_SUCCESS);
  EXPECT_EQ(r.get(), data);
}

INSTANTIATE_TEST_SUITE_P(Kinds, GpuP2p,
                         ::testing::Values(Case{true, true}, Case{true, false}, Case{false, true}),
                         [](const auto& info) {
                           return std::string(info.param.sendDev ? "D" : "H") + "to" +
                                  (info.param.recvDev ? "D" : "H");
                         });

TEST(GpuP2p, TruncationAndCancelLeaveDeviceBufferConsistent) {
  Buf s(true, 5000), r(true, 1000);
  auto data = pattern(5000, 1);
  s.put(data);
  r.put(std::vector<char>(1000, 0));
  rrt_request_t rq;
  ASSERT_EQ(rrt_irecv(r.p, 1000, RRT_BYTE, 0, 1, RRT_COMM_WORLD, &rq), RRT_SUCCESS);
  ASSERT_EQ(rrt_send(s.p, 5000, RRT_BYTE, 0, 1, RRT_COMM_WORLD), RRT_SUCCESS);
  rrt_status_t st;
  EXPECT_EQ(rrt_wait(&rq, &st), RRT_ERR_TRUNCATE);
  EXPECT_EQ(r.get(), std::vector<char>(data.begin(), data.begin() + 1000));
  // A cancelled device receive gives its staging back and leaves the buffer alone.
  ASSERT_EQ(rrt_irecv(r.p, 1000, RRT_BYTE, 0, 2, RRT_COMM_WORLD, &rq), RRT_SUCCESS);
  ASSERT_EQ(rrt_cancel(&rq), RRT_SUCCESS);
  ASSERT_EQ(rrt_wait(&rq, &st), RRT_SUCCESS);
  EXPECT_TRUE(st.cancelled);
}

TEST(GpuFastPath, HostBuffersDoNotQueryTheDriverPerMessage) {
  std::vector<char> a(256), b(256);
  rrt_request_t rq;
  ASSERT_EQ(rrt_irecv(b.data(), 256, RRT_BYTE, 0, 9, RRT_COMM_WORLD, &rq), RRT_SUCCESS);
  ASSERT_EQ(rrt_send(a.data(), 256, RRT_BYTE, 0, 9, RRT_COMM_WORLD), RRT_SUCCESS);
  ASSERT_EQ(rrt_wait(&rq, RRT_STATUS_IGNORE), RRT_SUCCESS);
  const uint64_t q = gFake->pointerQueries;
  const size_t copies = gFake->log.size();
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(rrt_irecv(b.data(), 256, RRT_BYTE, 0, 9, RRT_COMM_WORLD, &rq), RRT_SUCCESS);
    ASSERT_EQ(rrt_send(a.data(), 256, RRT_BYTE, 0, 9, RRT_COMM_WORLD), RRT_SUCCESS);
    ASSERT_EQ(rrt_wait(&rq, RRT_STATUS_IGNORE), RRT_SUCCESS);
  }
  EXPECT_EQ(gFake->pointerQueries, q);
  EXPECT_EQ(gFake->log.size(), copies) << "host messages went through device copies";
}

TEST(GpuPipelinedCopy, LargeDeviceToHostGoesInChunks) {
  const size_t n = 8u << 20;
  Buf s(true, n);
  auto data = pattern(n, 2);
  s.put(data);
  std::vector<char> out(n);
  const size_t before = gFake->log.size();
  ASSERT_EQ(rrt::gpu::copy(out.data(), s.p, n), rrt::Status::Ok);
  EXPECT_EQ(out, data);
  EXPECT_EQ(gFake->log.size() - before, 4u) << "8 MiB in 2 MiB chunks";
}

TEST(GpuPipelinedCopy, DriverRejectionIsAnErrorAndForgetsTheEntry) {
  Buf s(true, 4096);
  std::vector<char> out(4096);
  ASSERT_EQ(rrt::gpu::copy(out.data(), s.p, 4096), rrt::Status::Ok);
  EXPECT_EQ(rrt::gpu::memTypeCache()->classify(s.p, 1), rrt::memory::MemType::Cuda);
  gFake->failCopies = true;
  EXPECT_EQ(rrt::gpu::copy(out.data(), s.p, 4096), rrt::Status::ErrArg);
  gFake->failCopies = false;
  const uint64_t q = gFake->pointerQueries;
  EXPECT_EQ(rrt::gpu::memTypeCache()->classify(s.p, 1), rrt::memory::MemType::Cuda);
  EXPECT_EQ(gFake->pointerQueries, q + 1) << "entry not invalidated";
  // The error reaches the caller of a send as a value.
  EXPECT_EQ(rrt::gpu::memTypeCache()->deviceEntries() > 0, true);
}

// Collectives on device buffers (world of one rank: the algorithms' local copies and
// reductions run on the host mirrors).
TEST(GpuColl, AllreduceBcastAllgatherOnDeviceBuffers) {
  const size_t n = 1000;
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f;
  Buf s(true, n * sizeof(float)), r(true, n * sizeof(float));
  std::vector<char> bytes(reinterpret_cast<char*>(v.data()), reinterpret_cast<char*>(v.data()) + n * sizeof(float));
  s.put(bytes);
  ASSERT_EQ(rrt_allreduce(s.p, r.p, n, RRT_FLOAT, RRT_SUM, RRT_COMM_WORLD), RRT_SUCCESS);
  EXPECT_EQ(r.get(), bytes);
  // In place on a device buffer.
  ASSERT_EQ(rrt_allreduce(RRT_IN_PLACE, r.p, n, RRT_FLOAT, RRT_MAX, RRT_COMM_WORLD), RRT_SUCCESS);
  EXPECT_EQ(r.get(), bytes);
  ASSERT_EQ(rrt_bcast(r.p, n, RRT_FLOAT, 0, RRT_COMM_WORLD), RRT_SUCCESS);
  EXPECT_EQ(r.get(), bytes);
  Buf g(true, n * sizeof(float));
  ASSERT_EQ(rrt_allgather(s.p, n, RRT_FLOAT, g.p, n, RRT_FLOAT, RRT_COMM_WORLD), RRT_SUCCESS);
  EXPECT_EQ(g.get(), bytes);
  // Host send buffer, device receive buffer, non-blocking.
  rrt_request_t rq;
  Buf r2(true, n * sizeof(float));
  ASSERT_EQ(rrt_iallreduce(v.data(), r2.p, n, RRT_FLOAT, RRT_SUM, RRT_COMM_WORLD, &rq), RRT_SUCCESS);
  ASSERT_EQ(rrt_wait(&rq, RRT_STATUS_IGNORE), RRT_SUCCESS);
  EXPECT_EQ(r2.get(), bytes);
}

TEST(GpuColl, EveryKindWithDeviceBuffersAtOneRank) {
  const size_t n = 64;
  auto data = pattern(n, 9);
  Buf s(true, n), r(true, n);
  s.put(data);
  size_t counts[1] = {n}, displs[1] = {0};
  auto check = [&](int rc, const char* what) {
    ASSERT_EQ(rc, RRT_SUCCESS) << what;
    EXPECT_EQ(r.get(), data) << what;
    r.put(std::vector<char>(n, 0));
  };
  check(rrt_reduce(s.p, r.p, n, RRT_INT8, RRT_BOR, 0, RRT_COMM_WORLD), "reduce");
  check(rrt_scan(s.p, r.p, n, RRT_UINT8, RRT_SUM, RRT_COMM_WORLD), "scan");
  check(rrt_alltoall(s.p, n, RRT_BYTE, r.p, n, RRT_BYTE, RRT_COMM_WORLD), "alltoall");
  check(rrt_gather(s.p, n, RRT_BYTE, r.p, n, RRT_BYTE, 0, RRT_COMM_WORLD), "gather");
  check(rrt_scatter(s.p, n, RRT_BYTE, r.p, n, RRT_BYTE, 0, RRT_COMM_WORLD), "scatter");
  check(rrt_allgatherv(s.p, n, RRT_BYTE, r.p, counts, displs, RRT_BYTE, RRT_COMM_WORLD), "allgatherv");
  check(rrt_gatherv(s.p, n, RRT_BYTE, r.p, counts, displs, RRT_BYTE, 0, RRT_COMM_WORLD), "gatherv");
  check(rrt_scatterv(s.p, counts, displs, RRT_BYTE, r.p, n, RRT_BYTE, 0, RRT_COMM_WORLD), "scatterv");
  check(rrt_alltoallv(s.p, counts, displs, RRT_BYTE, r.p, counts, displs, RRT_BYTE, RRT_COMM_WORLD), "alltoallv");
  check(rrt_reduce_scatter(s.p, r.p, counts, RRT_UINT8, RRT_MAX, RRT_COMM_WORLD), "reduce_scatter");
  ASSERT_EQ(rrt_barrier(RRT_COMM_WORLD), RRT_SUCCESS);
}

}  // namespace
