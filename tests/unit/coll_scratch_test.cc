// The collectives' scratch cache (runtime/coll/scratch_cache.h): the cache on its own (reuse,
// best fit, bounds, destruction), then through the engine over the in-memory p2p: a repeated
// collective allocates nothing after its first call, several non-blocking collectives of
// different sizes outstanding at once each get their own buffers (results checked), and freeing
// a communicator frees its buffers.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "runtime/coll/op.h"
#include "runtime/coll/scratch_cache.h"
#include "runtime/coll/selection.h"
#include "tests/unit/coll_sim.h"

namespace rrt::coll {
namespace {

constexpr size_t kMiB = 1024 * 1024;

bool overlap(const ScratchCache::Buffer& a, size_t an, const ScratchCache::Buffer& b, size_t bn) {
  return a.data < b.data + bn && b.data < a.data + an;
}

TEST(ScratchCache, ReusesAReleasedBuffer) {
  ScratchCache c(64 * kMiB);
  ScratchCache::Buffer a = c.acquire(100000);
  ASSERT_NE(a.data, nullptr);
  EXPECT_GE(a.capacity, 100000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data) % 64, 0u);
  a.data[0] = 1;
  a.data[99999] = 2;
  c.release(a);
  EXPECT_EQ(c.lentBuffers(), 0u);
  EXPECT_EQ(c.idleBuffers(), 1u);
  ScratchCache::Buffer b = c.acquire(70000);  // a smaller request fits the same buffer
  EXPECT_EQ(b.data, a.data);
  EXPECT_EQ(c.allocations(), 1u);
  c.release(b);
}

TEST(ScratchCache, LentBuffersAreDistinctAndBestFit) {
  ScratchCache c(64 * kMiB);
  ScratchCache::Buffer big = c.acquire(1 * kMiB), small = c.acquire(1000), mid = c.acquire(40000);
  ASSERT_TRUE(big.data && small.data && mid.data);
  EXPECT_FALSE(overlap(big, 1 * kMiB, small, 1000));
  EXPECT_FALSE(overlap(big, 1 * kMiB, mid, 40000));
  EXPECT_FALSE(overlap(small, 1000, mid, 40000));
  EXPECT_EQ(c.lentBuffers(), 3u);
  c.release(big);
  c.release(small);
  c.release(mid);
  // 30000 bytes: the 40000-byte buffer is the best fit, not the 1 MiB one.
  ScratchCache::Buffer again = c.acquire(30000);
  EXPECT_EQ(again.data, mid.data);
  // Taken: a second request of the same size finds only the 1 MiB buffer.
  ScratchCache::Buffer second = c.acquire(30000);
  EXPECT_EQ(second.data, big.data);
  EXPECT_EQ(c.allocations(), 3u);
  c.release(again);
  c.release(second);
}

TEST(ScratchCache, BoundsFreeTheSmallestAndTheOversized) {
  const size_t before = ScratchCache::liveBytes();
  {
    ScratchCache c(1 * kMiB);
    ScratchCache::Buffer huge = c.acquire(2 * kMiB);  // larger than the bound: never kept
    ASSERT_NE(huge.data, nullptr);
    EXPECT_GE(ScratchCache::liveBytes(), before + 2 * kMiB);
    c.release(huge);
    EXPECT_EQ(c.idleBuffers(), 0u);
    EXPECT_EQ(ScratchCache::liveBytes(), before);

    // More idle buffers than kKeepBuffers: the smallest go.
    std::vector<ScratchCache::Buffer> lent;
    for (size_t i = 0; i < ScratchCache::kKeepBuffers + 2; ++i) lent.push_back(c.acquire(64u << i));
    for (const ScratchCache::Buffer& b : lent) c.release(b);
    EXPECT_EQ(c.idleBuffers(), ScratchCache::kKeepBuffers);
    ScratchCache::Buffer b = c.acquire(1);  // the smallest left is the third
    EXPECT_EQ(b.data, lent[2].data);
    c.release(b);

    // Over the byte bound: 512K + 512K fit in 1 MiB, a third 512K evicts one.
    ScratchCache d(1 * kMiB);
    ScratchCache::Buffer x = d.acquire(512 * 1024), y = d.acquire(512 * 1024), z = d.acquire(512 * 1024);
    d.release(x);
    d.release(y);
    d.release(z);
    EXPECT_LE(d.idleBytes(), 1 * kMiB);
    EXPECT_EQ(d.idleBuffers(), 2u);
  }
  EXPECT_EQ(ScratchCache::liveBytes(), before);  // the destructors freed every idle buffer
}

TEST(ScratchCache, ZeroKeepsNothing) {
  const size_t before = ScratchCache::liveBytes();
  ScratchCache c(0);
  ScratchCache::Buffer a = c.acquire(64);
  c.release(a);
  EXPECT_EQ(c.idleBuffers(), 0u);
  EXPECT_EQ(ScratchCache::liveBytes(), before);
  c.release(c.acquire(64));
  EXPECT_EQ(c.allocations(), 2u);
}

// ---- through the engine ---------------------------------------------------------------------

using Ints = std::vector<int32_t>;

CollArgs sumArgs(CollKind kind, const Ints& in, Ints& out) {
  CollArgs a;
  a.kind = kind;
  a.sbuf = in.data();
  a.rbuf = out.data();
  a.count = in.size();
  a.typeSize = sizeof(int32_t);
  EXPECT_EQ(makeReducer(RRT_SUM, RRT_INT32, &a.reducer), Status::Ok);
  return a;
}

Ints inputOf(int rank, size_t n, int salt) {
  Ints v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>((rank + 1) * 1000 + i * 7 + salt);
  return v;
}

Ints sumOf(int ranks, size_t n, int salt) {
  Ints s(n, 0);
  for (int r = 0; r < ranks; ++r) {
    Ints v = inputOf(r, n, salt);
    for (size_t i = 0; i < n; ++i) s[i] += v[i];
  }
  return s;
}

struct Forced {
  Forced() {
    setenv("RRT_COLL_REDUCE", "rabenseifner", 1);
    setenv("RRT_COLL_ALLREDUCE", "ring", 1);
    reloadSelection();
  }
  ~Forced() {
    unsetenv("RRT_COLL_REDUCE");
    unsetenv("RRT_COLL_ALLREDUCE");
    reloadSelection();
  }
};

// One round: on every rank of comms, a reduce and two allreduces of different sizes, all
// outstanding at once; checks the results.
void roundOfThree(sim::World& w, const std::vector<proto::Comm*>& comms, const char* what) {
  const size_t kSizes[3] = {20011, 1021, 300007};
  const int p = static_cast<int>(comms.size());
  std::vector<Ints> in[3], out[3];
  std::vector<core::Request*> reqs;
  for (int k = 0; k < 3; ++k)
    for (int r = 0; r < p; ++r) {
      in[k].push_back(inputOf(r, kSizes[k], k));
      out[k].push_back(Ints(kSizes[k], -1));
    }
  for (int r = 0; r < p; ++r)
    for (int k = 0; k < 3; ++k) {
      core::Request* q = nullptr;
      const CollKind kind = k == 0 ? CollKind::Reduce : CollKind::Allreduce;
      ASSERT_EQ(start(*comms[static_cast<size_t>(r)], sumArgs(kind, in[k][static_cast<size_t>(r)], out[k][static_cast<size_t>(r)]), &q),
                Status::Ok);
      reqs.push_back(q);
    }
  ASSERT_TRUE(w.waitAll(reqs)) << what;
  for (core::Request* q : reqs) {
    EXPECT_EQ(q->status.error, RRT_SUCCESS) << what;
    core::requestRelease(q);
  }
  for (int k = 0; k < 3; ++k) {
    const Ints want = sumOf(p, kSizes[k], k);
    for (int r = 0; r < p; ++r) {
      if (k == 0 && r != 0) continue;  // the reduce's result is at its root only
      EXPECT_EQ(out[k][static_cast<size_t>(r)], want) << what << " collective " << k << " rank " << r;
    }
  }
}

uint64_t allocationsOf(const std::vector<proto::Comm*>& comms) {
  uint64_t n = 0;
  for (proto::Comm* c : comms) {
    const ScratchCache* s = scratchCacheOf(*c);
    if (s) {
      EXPECT_EQ(s->lentBuffers(), 0u);
      n += s->allocations();
    }
  }
  return n;
}

TEST(ScratchCacheEngine, SteadyStateAllocatesNothing) {
  Forced forced;
  for (int p : {2, 4, 5}) {
    sim::World w(p, sim::Mode::Rendezvous, 7);
    std::vector<proto::Comm*> comms;
    for (int r = 0; r < p; ++r) comms.push_back(&w.comm(r));
    roundOfThree(w, comms, "first round");
    const uint64_t first = allocationsOf(comms);
    EXPECT_GT(first, 0u);
    roundOfThree(w, comms, "second round");
    roundOfThree(w, comms, "third round");
    EXPECT_EQ(allocationsOf(comms), first) << "p=" << p;
  }
}

TEST(ScratchCacheEngine, FreeingTheCommunicatorFreesItsBuffers) {
  Forced forced;
  const int p = 6;
  sim::World w(p, sim::Mode::Eager, 3);
  std::vector<int> color;
  for (int r = 0; r < p; ++r) color.push_back(r % 2);
  const size_t before = ScratchCache::liveBytes();
  {
    auto sub = w.split(color, 8);
    for (int c = 0; c < 2; ++c) {
      std::vector<proto::Comm*> comms;
      for (int r = c; r < p; r += 2) comms.push_back(sub[static_cast<size_t>(r)].get());
      roundOfThree(w, comms, "split");
    }
    EXPECT_GT(ScratchCache::liveBytes(), before);
  }
  EXPECT_EQ(ScratchCache::liveBytes(), before);
}

}  // namespace
}  // namespace rrt::coll
