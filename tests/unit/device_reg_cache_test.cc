// The device registration cache (runtime/memory/device_reg_cache.h) with a counting domain: a hit
// needs the same allocation (base and buffer id), a new allocation at the same address (new id)
// drops the stale registration (at once, or at its last put when in use), whole page-aligned
// allocations are registered, LRU eviction keeps the bound, and a failed registration leaves
// nothing behind.
#include <gtest/gtest.h>

#include <unistd.h>

#include <map>

#include "runtime/memory/device_reg_cache.h"

namespace rrt::memory {
namespace {

class CountingDomain : public RegDomain {
 public:
  Status reg(void* addr, size_t len, void** handle) override {
    if (fail) return Status::ErrTransport;
    *handle = reinterpret_cast<void*>(++next);
    live[next] = {reinterpret_cast<uintptr_t>(addr), len};
    return Status::Ok;
  }
  void dereg(void* handle) override {
    EXPECT_EQ(live.erase(reinterpret_cast<uintptr_t>(handle)), 1u) << "dereg of a dead handle";
  }
  std::map<uintptr_t, std::pair<uintptr_t, size_t>> live;  // handle -> registered range
  uintptr_t next = 0;
  bool fail = false;
};

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
constexpr uintptr_t kBase = 0x7f0000200000;

TEST(DeviceRegCache, SameAllocationHitsAndRegistersItWhole) {
  CountingDomain d;
  {
    DeviceRegCache c(&d, 8);
    RegEntry *a, *b;
    ASSERT_EQ(c.get(kBase, 1000, 7, &a), Status::Ok);
    ASSERT_EQ(d.live.size(), 1u);
    const auto range = d.live.begin()->second;
    EXPECT_EQ(range.first, kBase);
    EXPECT_EQ(range.second, kPage);  // rounded up to whole pages
    ASSERT_EQ(c.get(kBase, 1000, 7, &b), Status::Ok);
    EXPECT_EQ(a, b);
    EXPECT_EQ(c.stats().hits, 1u);
    EXPECT_EQ(c.stats().misses, 1u);
    c.put(a);
    c.put(b);
    EXPECT_EQ(d.live.size(), 1u) << "unreferenced entries stay cached";
  }
  EXPECT_TRUE(d.live.empty()) << "the destructor deregisters everything";
}

TEST(DeviceRegCache, NewAllocationAtTheSameAddressDropsTheStaleRegistration) {
  CountingDomain d;
  DeviceRegCache c(&d, 8);
  RegEntry *old, *fresh;
  ASSERT_EQ(c.get(kBase, 4 * kPage, 1, &old), Status::Ok);
  const void* oldHandle = old->handle;
  c.put(old);
  // freed and allocated again at kBase: the driver's buffer id differs
  ASSERT_EQ(c.get(kBase, 4 * kPage, 2, &fresh), Status::Ok);
  EXPECT_NE(fresh->handle, oldHandle);
  EXPECT_EQ(d.live.count(reinterpret_cast<uintptr_t>(oldHandle)), 0u) << "stale one deregistered";
  EXPECT_EQ(c.stats().invalidations, 1u);
  EXPECT_EQ(c.cachedEntries(), 1u);
  c.put(fresh);
}

TEST(DeviceRegCache, StaleEntryInUseLivesUntilItsLastPut) {
  CountingDomain d;
  DeviceRegCache c(&d, 8);
  RegEntry *old, *fresh;
  ASSERT_EQ(c.get(kBase, kPage, 1, &old), Status::Ok);  // an operation still reads through it
  ASSERT_EQ(c.get(kBase, kPage, 2, &fresh), Status::Ok);
  EXPECT_EQ(d.live.size(), 2u);
  c.put(old);
  EXPECT_EQ(d.live.size(), 1u);
  c.put(fresh);
  EXPECT_EQ(d.live.size(), 1u);
}

TEST(DeviceRegCache, LargerRequestThanTheCachedEntryRegistersAgain) {
  CountingDomain d;
  DeviceRegCache c(&d, 8);
  RegEntry *a, *b;
  ASSERT_EQ(c.get(kBase, kPage, 3, &a), Status::Ok);
  c.put(a);
  ASSERT_EQ(c.get(kBase, 3 * kPage, 3, &b), Status::Ok);
  EXPECT_EQ(c.stats().misses, 2u);
  EXPECT_GE(b->end - b->start, 3 * kPage);
  c.put(b);
  EXPECT_EQ(d.live.size(), 1u);
}

TEST(DeviceRegCache, EvictsTheLeastRecentlyUsedBeyondTheBound) {
  CountingDomain d;
  DeviceRegCache c(&d, 2);
  RegEntry* e[3];
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(c.get(kBase + i * 0x200000, kPage, 10 + i, &e[i]), Status::Ok);
    c.put(e[i]);
  }
  EXPECT_EQ(c.cachedEntries(), 2u);
  EXPECT_EQ(d.live.size(), 2u);
  EXPECT_EQ(c.stats().evictions, 1u);
  RegEntry* again;
  ASSERT_EQ(c.get(kBase, kPage, 10, &again), Status::Ok);  // the evicted first one
  EXPECT_EQ(c.stats().misses, 4u);
  c.put(again);
}

TEST(DeviceRegCache, ReferencedEntriesAreNotEvicted) {
  CountingDomain d;
  DeviceRegCache c(&d, 1);
  RegEntry *a, *b;
  ASSERT_EQ(c.get(kBase, kPage, 1, &a), Status::Ok);
  ASSERT_EQ(c.get(kBase + 0x200000, kPage, 2, &b), Status::Ok);
  EXPECT_EQ(d.live.size(), 2u) << "both in use: over the bound until one is put";
  c.put(a);
  EXPECT_EQ(d.live.size(), 1u);
  c.put(b);
  EXPECT_EQ(c.cachedEntries(), 1u);
}

TEST(DeviceRegCache, FailedRegistrationLeavesNothing) {
  CountingDomain d;
  DeviceRegCache c(&d, 4);
  d.fail = true;
  RegEntry* e = nullptr;
  EXPECT_EQ(c.get(kBase, kPage, 1, &e), Status::ErrTransport);
  EXPECT_EQ(c.cachedEntries(), 0u);
  d.fail = false;
  ASSERT_EQ(c.get(kBase, kPage, 1, &e), Status::Ok);
  c.put(e);
}

}  // namespace
}  // namespace rrt::memory
