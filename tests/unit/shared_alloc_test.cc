// rrt_alloc_mem's memory (runtime/memory/shared_alloc.h) and its mapping by peers
// (peer_map.h): what is found as shared, what another process sees through peerMap, and the
// errors. The peer is a forked child, which maps the parent's memory as a rank maps a peer's.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include <gtest/gtest.h>

#include "runtime/memory/peer_map.h"
#include "runtime/memory/shared_alloc.h"

namespace rrt::memory {
namespace {

TEST(SharedAlloc, FindsWholeRangesInsideAnAllocationOnly) {
  void* p = nullptr;
  ASSERT_EQ(sharedAlloc(100000, &p), Status::Ok);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  char* c = static_cast<char*>(p);
  std::memset(c, 7, 100000);
  SharedRef ref;
  ASSERT_TRUE(sharedFind(c + 100, 500, &ref));
  EXPECT_NE(ref.ino, 0u);
  EXPECT_EQ(ref.offset, 100u);
  EXPECT_GE(ref.mapBytes, 100000u);
  EXPECT_GE(ref.fd, 0);
  // Past the mapping's end, or memory that is not ours: not shared.
  EXPECT_FALSE(sharedFind(c + 100, ref.mapBytes, &ref));
  int local = 0;
  EXPECT_FALSE(sharedFind(&local, sizeof local, &ref));
  EXPECT_EQ(sharedFree(p), Status::Ok);
  EXPECT_FALSE(sharedFind(c, 1, &ref));
}

TEST(SharedAlloc, SmallAllocationsArePrivate) {
  void* p = nullptr;
  ASSERT_EQ(sharedAlloc(1000, &p), Status::Ok);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
  std::memset(p, 1, 1000);
  SharedRef ref;
  EXPECT_FALSE(sharedFind(p, 1000, &ref));
  EXPECT_EQ(sharedFree(p), Status::Ok);
}

TEST(SharedAlloc, ZeroBytesAndBadFrees) {
  void* p = reinterpret_cast<void*>(1);
  EXPECT_EQ(sharedAlloc(0, &p), Status::Ok);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(sharedFree(nullptr), Status::Ok);
  int local = 0;
  EXPECT_EQ(sharedFree(&local), Status::ErrArg);
  ASSERT_EQ(sharedAlloc(100, &p), Status::Ok);
  EXPECT_EQ(sharedFree(static_cast<char*>(p) + 8), Status::ErrArg);  // not its start
  EXPECT_EQ(sharedFree(p), Status::Ok);
  EXPECT_EQ(sharedFree(p), Status::ErrArg);  // twice
}

TEST(SharedAlloc, TheCApiChecksItsArguments) {
  EXPECT_EQ(rrt_alloc_mem(64, nullptr), RRT_ERR_ARG);
  void* p = nullptr;
  ASSERT_EQ(rrt_alloc_mem(64, &p), RRT_SUCCESS);
  EXPECT_EQ(rrt_free_mem(p), RRT_SUCCESS);
  EXPECT_EQ(rrt_free_mem(p), RRT_ERR_ARG);
}

// The child maps the parent's allocation, checks what the parent wrote and writes back; its
// exit status says how it went (0: all of it).
int childMaps(pid_t parent, const SharedRef& ref, int32_t probe, uint64_t probeIno) {
  if (!peerMappable(parent, probe, probeIno)) return 1;
  if (peerMappable(parent, probe, probeIno + 1)) return 2;  // another inode: not that file
  char* q = peerMap(parent, ref, 1);
  if (!q) return 3;
  if (peerMap(parent, ref, 2) != q) return 4;  // cached: the same mapping
  for (int i = 0; i < 4096; ++i)
    if (q[i] != static_cast<char>(i * 3)) return 5;
  std::memset(q, 0x5a, 4096);
  SharedRef stale = ref;
  stale.ino += 1000003;  // a file that fd is not
  if (peerMap(parent, stale, 3)) return 6;
  return 0;
}

TEST(PeerMap, AnotherProcessMapsTheSameMemory) {
  void* p = nullptr;
  ASSERT_EQ(sharedAlloc(24 * 4096, &p), Status::Ok);
  char* c = static_cast<char*>(p);
  for (int i = 0; i < 4096; ++i) c[4096 + i] = static_cast<char>(i * 3);
  SharedRef ref;
  ASSERT_TRUE(sharedFind(c + 4096, 4096, &ref));
  uint64_t probeIno = 0;
  const int32_t probe = probeFd(&probeIno);
  ASSERT_GE(probe, 0);
  const pid_t parent = getpid();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(childMaps(parent, ref, probe, probeIno));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(c[4096 + i], 0x5a) << i;  // the child's writes
  EXPECT_EQ(sharedFree(p), Status::Ok);
}

}  // namespace
}  // namespace rrt::memory
