// The registration cache (runtime/memory/reg_cache.h) with a recording domain, and the release
// hooks (release_hooks.h) as the linker binds them in a program linked with rrt: hits and misses,
// covering lookups, LRU eviction by entries and bytes, invalidation by munmap / mremap / madvise
// (also while a registration is in use), remapping at the same address, malloc keeping its pages,
// and invalidation from another thread while the owner gets and puts (the data race this can
// hide shows under --enable-sanitizers=thread).
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <set>
#include <thread>

#include "runtime/memory/reg_cache.h"
#include "runtime/memory/release_hooks.h"

namespace rrt::memory {
namespace {

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

struct Reg {
  uintptr_t addr;
  size_t len;
};

// Hands out numbered handles and remembers which are live.
class RecordingDomain : public RegDomain {
 public:
  Status reg(void* addr, size_t len, void** handle) override {
    Reg* r = new Reg{reinterpret_cast<uintptr_t>(addr), len};
    live.insert(r);
    ++regs;
    *handle = r;
    return Status::Ok;
  }
  void dereg(void* handle) override {
    auto* r = static_cast<Reg*>(handle);
    EXPECT_EQ(live.erase(r), 1u) << "dereg of a handle that is not live";
    ++deregs;
    delete r;
  }
  std::set<Reg*> live;
  int regs = 0, deregs = 0;
};

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

void* mapPages(size_t pages, void* at = nullptr) {
  void* p = mmap(at, pages * kPage, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  return p;
}

TEST(RegCache, HitAfterMissAndCoveringLookups) {
  RecordingDomain d;
  RegCache c(&d, {});
  char* buf = static_cast<char*>(mapPages(4));
  RegEntry* e = nullptr;
  ASSERT_EQ(c.get(buf + 100, 2 * kPage, &e), Status::Ok);
  EXPECT_EQ(e->start, reinterpret_cast<uintptr_t>(buf));  // page-aligned
  EXPECT_EQ(e->end, reinterpret_cast<uintptr_t>(buf) + 3 * kPage);
  c.put(e);
  RegEntry* e2 = nullptr;
  ASSERT_EQ(c.get(buf + kPage, kPage, &e2), Status::Ok);  // inside: hit
  EXPECT_EQ(e2, e);
  c.put(e2);
  ASSERT_EQ(c.get(buf, 4 * kPage, &e2), Status::Ok);  // larger: miss
  EXPECT_NE(e2, e);
  c.put(e2);
  EXPECT_EQ(d.regs, 2);
  EXPECT_EQ(c.stats().hits, 1u);
  EXPECT_EQ(c.stats().misses, 2u);
  munmap(buf, 4 * kPage);
}

TEST(RegCache, MunmapInvalidatesAndRemapAtSameAddressRegistersAgain) {
  RecordingDomain d;
  RegCache c(&d, {});
  const uint64_t events = releaseEvents();
  void* buf = mapPages(8);
  RegEntry* e = nullptr;
  ASSERT_EQ(c.get(buf, 8 * kPage, &e), Status::Ok);
  c.put(e);
  ASSERT_EQ(munmap(buf, 8 * kPage), 0);  // through the hook
  EXPECT_GT(releaseEvents(), events) << "munmap did not reach the release hook";
  EXPECT_EQ(c.stats().invalidations, 1u);
  void* again = mapPages(8, buf);
  ASSERT_EQ(again, buf);
  ASSERT_EQ(c.get(again, 8 * kPage, &e), Status::Ok);
  EXPECT_EQ(c.stats().hits, 0u) << "a registration of the unmapped pages was reused";
  EXPECT_EQ(d.regs, 2);
  EXPECT_EQ(d.deregs, 1) << "the stale registration is still live";
  EXPECT_EQ(d.live.size(), 1u);
  c.put(e);
  munmap(again, 8 * kPage);
}

TEST(RegCache, InvalidatedWhileInUseIsReleasedOnPut) {
  RecordingDomain d;
  RegCache c(&d, {});
  void* buf = mapPages(2);
  RegEntry* e = nullptr;
  ASSERT_EQ(c.get(buf, kPage, &e), Status::Ok);
  ASSERT_EQ(munmap(buf, 2 * kPage), 0);
  EXPECT_TRUE(e->dead);
  EXPECT_EQ(d.deregs, 0) << "deregistered under an operation in flight";
  c.put(e);
  EXPECT_EQ(d.deregs, 1);
  EXPECT_EQ(c.cachedEntries(), 0u);
}

TEST(RegCache, MadviseDontneedAndMremapInvalidate) {
  RecordingDomain d;
  RegCache c(&d, {});
  char* buf = static_cast<char*>(mapPages(4));
  RegEntry* e = nullptr;
  ASSERT_EQ(c.get(buf, 4 * kPage, &e), Status::Ok);
  c.put(e);
  ASSERT_EQ(madvise(buf + kPage, kPage, MADV_DONTNEED), 0);
  EXPECT_EQ(c.stats().invalidations, 1u);
  ASSERT_EQ(madvise(buf, kPage, MADV_WILLNEED), 0);  // harmless advice: kept
  ASSERT_EQ(c.get(buf, 4 * kPage, &e), Status::Ok);
  c.put(e);
  EXPECT_EQ(d.regs, 2);
  void* moved = mremap(buf, 4 * kPage, 64 * kPage, MREMAP_MAYMOVE);
  ASSERT_NE(moved, MAP_FAILED);
  EXPECT_EQ(c.stats().invalidations, 2u);
  munmap(moved, 64 * kPage);
}

TEST(RegCache, UnrelatedUnmapKeepsEntries) {
  RecordingDomain d;
  RegCache c(&d, {});
  void* a = mapPages(2);
  void* b = mapPages(2);
  RegEntry* e = nullptr;
  ASSERT_EQ(c.get(a, 2 * kPage, &e), Status::Ok);
  c.put(e);
  munmap(b, 2 * kPage);
  ASSERT_EQ(c.get(a, 2 * kPage, &e), Status::Ok);
  EXPECT_EQ(c.stats().hits, 1u);
  c.put(e);
  munmap(a, 2 * kPage);
}

TEST(RegCache, LruEvictionByEntriesAndBytes) {
  RecordingDomain d;
  RegCache::Limits lim;
  lim.maxEntries = 2;
  RegCache c(&d, lim);
  char* buf = static_cast<char*>(mapPages(8));
  RegEntry* e[3];
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(c.get(buf + 2 * i * kPage, kPage, &e[i]), Status::Ok);
    c.put(e[i]);
  }
  EXPECT_EQ(c.cachedEntries(), 2u);
  EXPECT_EQ(c.stats().evictions, 1u);
  RegEntry* x = nullptr;
  ASSERT_EQ(c.get(buf, kPage, &x), Status::Ok);  // the oldest went: miss
  EXPECT_EQ(c.stats().hits, 0u);
  c.put(x);
  ASSERT_EQ(c.get(buf + 4 * kPage, kPage, &x), Status::Ok);  // the newest stayed: hit
  EXPECT_EQ(c.stats().hits, 1u);
  c.put(x);

  RegCache::Limits small;
  small.maxBytes = 3 * kPage;
  RecordingDomain d2;
  RegCache c2(&d2, small);
  ASSERT_EQ(c2.get(buf, 2 * kPage, &x), Status::Ok);
  RegEntry* y = nullptr;
  ASSERT_EQ(c2.get(buf + 4 * kPage, 2 * kPage, &y), Status::Ok);  // over budget, both in use
  EXPECT_EQ(c2.cachedEntries(), 2u) << "entries in use must never be evicted";
  c2.put(x);  // now x is the LRU victim
  EXPECT_EQ(c2.cachedEntries(), 1u);
  EXPECT_EQ(d2.deregs, 1);
  c2.put(y);
  munmap(buf, 8 * kPage);
}

TEST(RegCache, DisabledRegistersEveryTime) {
  RecordingDomain d;
  RegCache::Limits lim;
  lim.enabled = false;
  RegCache c(&d, lim);
  void* buf = mapPages(1);
  for (int i = 0; i < 3; ++i) {
    RegEntry* e = nullptr;
    ASSERT_EQ(c.get(buf, kPage, &e), Status::Ok);
    c.put(e);
  }
  EXPECT_EQ(d.regs, 3);
  EXPECT_EQ(d.deregs, 3);
  munmap(buf, kPage);
}

TEST(RegCache, FreeKeepsPagesWhileCacheLives) {
  // With a cache live, malloc must not give large blocks back with munmap (release_hooks.h):
  // free + malloc at the same address then keeps the same pages, and a hit is correct.
  RecordingDomain d;
  RegCache c(&d, {});
  const uint64_t before = releaseEvents();
  for (int i = 0; i < 4; ++i) {
    void* p = malloc(size_t{4} << 20);  // far above glibc's default mmap threshold
    ASSERT_NE(p, nullptr);
    static_cast<char*>(p)[0] = 1;
    free(p);
  }
  EXPECT_EQ(releaseEvents(), before) << "free() unmapped memory: cached registrations could go stale";
}

TEST(RegCache, InvalidateFromAnotherThreadWhileOwnerGetsAndPuts) {
  // The hooks may call invalidate() from any thread (a user thread's munmap); the owner's get,
  // put and purge must only look at what invalidate() changes under the lock or through the
  // atomic flag. The domain is only ever called from the owner's thread.
  RecordingDomain d;
  RegCache::Limits lim;
  lim.maxEntries = 4;  // evictions too
  RegCache c(&d, lim);
  constexpr int kPages = 8, kRounds = 20000;
  char* buf = static_cast<char*>(mapPages(kPages));
  const uint64_t before = releaseEvents();
  std::atomic<bool> done{false};
  std::thread other([&] {
    for (unsigned i = 0; !done.load(std::memory_order_relaxed); ++i)
      releaseRange(buf + (i % (kPages - 2)) * kPage, kPage);
  });
  // Until both threads have done kRounds each: they overlap however they are scheduled.
  bool ok = true;
  for (int i = 0; ok && (i < kRounds || releaseEvents() - before < kRounds); ++i) {
    RegEntry* e = nullptr;
    ok = c.get(buf + (i % (kPages - 2)) * kPage, 1 + (i % 3) * kPage, &e) == Status::Ok;
    if (!ok) break;
    EXPECT_LE(e->start, reinterpret_cast<uintptr_t>(buf + (i % (kPages - 2)) * kPage));
    c.put(e);
  }
  done = true;
  other.join();
  ASSERT_TRUE(ok) << "get failed";
  c.purge();
  EXPECT_EQ(d.live.size(), c.cachedEntries()) << "a registration neither cached nor released";
  EXPECT_EQ(static_cast<size_t>(d.regs - d.deregs), d.live.size());
  munmap(buf, kPages * kPage);
}

}  // namespace
}  // namespace rrt::memory
