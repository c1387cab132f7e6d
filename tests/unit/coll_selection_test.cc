// The selection table and its RRT_COLL_* overrides.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "runtime/coll/selection.h"

namespace rrt::coll {
namespace {

using memory::MemType;

TEST(CollSelection, EveryCollectiveHasAnAlgorithmEverywhere) {
  for (int k = 0; k < kCollKinds; ++k)
    for (int p : {1, 2, 3, 4, 5, 8, 16, 1000})
      for (size_t b : {size_t{0}, size_t{8}, size_t{1} << 12, size_t{1} << 20, size_t{1} << 30})
        for (bool comm : {true, false}) {
          const Algorithm* a = selectFromTable(static_cast<CollKind>(k), b, p, MemType::Host, comm);
          ASSERT_NE(a, nullptr) << kindName(static_cast<CollKind>(k)) << " p=" << p << " b=" << b;
          EXPECT_EQ(a->kind, static_cast<CollKind>(k));
          if (!comm) EXPECT_FALSE(a->flags & kNeedsCommutative) << a->name;
          // Device memory falls back to the host rules.
          EXPECT_NE(selectFromTable(static_cast<CollKind>(k), b, p, MemType::Cuda, comm), nullptr);
        }
}

TEST(CollSelection, Defaults) {
  auto pick = [](CollKind k, size_t b, int p, bool c = true) {
    return std::string(selectFromTable(k, b, p, MemType::Host, c)->name);
  };
  EXPECT_EQ(pick(CollKind::Allreduce, 8, 4), "recursive_doubling");
  EXPECT_EQ(pick(CollKind::Allreduce, 4 << 20, 2), "ring");
  EXPECT_EQ(pick(CollKind::Allreduce, (512 << 10) - 1, 2), "rabenseifner");
  EXPECT_EQ(pick(CollKind::Allreduce, 512 << 10, 2), "ring");
  EXPECT_EQ(pick(CollKind::Allreduce, 4 << 20, 4), "rabenseifner");
  EXPECT_EQ(pick(CollKind::Allreduce, 4 << 20, 4, false), "recursive_doubling");
  EXPECT_EQ(pick(CollKind::Allgather, 8, 4), "recursive_doubling");
  EXPECT_EQ(pick(CollKind::Allgather, 8, 6), "bruck");
  EXPECT_EQ(pick(CollKind::Allgather, 1 << 20, 6), "scattered");
  EXPECT_EQ(pick(CollKind::Allgather, 1 << 20, 16), "ring");
  EXPECT_EQ(pick(CollKind::ReduceScatter, 8, 4, false), "reduce_scatterv");
  EXPECT_EQ(pick(CollKind::Barrier, 0, 7), "linear");
  EXPECT_EQ(pick(CollKind::Reduce, 8, 4), "linear");
  EXPECT_EQ(pick(CollKind::Alltoall, 8, 4), "scattered");
  EXPECT_EQ(pick(CollKind::Alltoall, 8, 9), "bruck");
  EXPECT_EQ(pick(CollKind::Reduce, 8, 3), "binomial");
  EXPECT_EQ(pick(CollKind::Reduce, 1 << 20, 4), "binomial");
  EXPECT_EQ(pick(CollKind::Bcast, 128 << 10, 4), "linear");
  EXPECT_EQ(pick(CollKind::Bcast, 512 << 10, 4), "linear");
  EXPECT_EQ(pick(CollKind::Bcast, 4 << 20, 8), "linear");
  EXPECT_EQ(pick(CollKind::Bcast, 512 << 10, 3), "binomial");
  EXPECT_EQ(pick(CollKind::Bcast, 512 << 10, 9), "binomial");
  EXPECT_EQ(pick(CollKind::Barrier, 0, 2), "dissemination");
  EXPECT_EQ(pick(CollKind::Barrier, 0, 9), "dissemination");
}

// The name of the algorithm the table picks for host memory and a communicator of this shape.
std::string onHost(CollKind k, size_t b, int p, unsigned shape, bool commutative = true) {
  return std::string(selectFromTable(k, b, p, MemType::Host, commutative, shape)->name);
}

// The shared-memory allreduce: only for blocking calls on host buffers of a communicator whose
// ranks all share memory, from the sizes where it wins; forcing it elsewhere falls back.
TEST(CollSelection, SharedMemoryAlgorithmsOnlyWhereTheyCanRun) {
  const unsigned one = kShapeSharedMemory | kShapeDirect;
  auto pick = [](size_t b, int p, unsigned shape, bool c = true) {
    return onHost(CollKind::Allreduce, b, p, shape, c);
  };
  EXPECT_EQ(pick(8, 2, one), "shm_flat");
  EXPECT_EQ(pick(2 << 10, 2, one), "recursive_doubling");
  EXPECT_EQ(pick((32 << 10) - 1, 4, one), "shm_flat");
  EXPECT_EQ(pick(8, 4, one, false), "shm_flat");  // rank order: non-commutative ops too
  EXPECT_EQ(pick(8, 4, kShapeSharedMemory), "recursive_doubling");  // non-blocking
  EXPECT_EQ(pick(4 << 20, 2, one), "shm");
  EXPECT_EQ(pick(32 << 10, 2, one), "shm");
  EXPECT_EQ(pick((32 << 10) - 1, 2, one), "rabenseifner");
  EXPECT_EQ(pick(16 << 10, 3, one), "shm");
  EXPECT_EQ(pick((16 << 10) - 1, 3, one), "shm_flat");
  EXPECT_EQ(pick(32 << 10, 4, one), "shm");
  EXPECT_EQ(pick(8 << 10, 8, one), "shm");
  EXPECT_EQ(pick((8 << 10) - 1, 8, one), "shm_flat");
  EXPECT_EQ(pick(8, 9, one), "recursive_doubling");
  EXPECT_EQ(pick(4 << 20, 4, one, false), "recursive_doubling");  // not commutative
  EXPECT_EQ(pick(4 << 20, 4, kShapeSharedMemory), "rabenseifner");  // non-blocking
  EXPECT_EQ(pick(4 << 20, 4, kShapeDirect), "rabenseifner");        // not all on one node
  EXPECT_EQ(pick(4 << 20, 2, kShapeDirect), "ring");
  EXPECT_EQ(pick(64 << 10, 4, kShapeDirect | kShapeNodeAware), "hierarchical");
  auto reduce = [](size_t b, int p, unsigned shape) {
    return onHost(CollKind::Reduce, b, p, shape);
  };
  EXPECT_EQ(reduce(256 << 10, 2, one), "shm");
  EXPECT_EQ(reduce(1 << 20, 2, one), "binomial");
  EXPECT_EQ(reduce(8, 2, one), "shm_flat");
  EXPECT_EQ(reduce(8 << 10, 2, one), "binomial");
  EXPECT_EQ(reduce(128 << 10, 4, one), "shm_flat");
  EXPECT_EQ(reduce(16 << 10, 4, one), "linear");
  EXPECT_EQ(reduce(4 << 20, 3, one), "shm_flat");
  EXPECT_EQ(reduce(256 << 10, 8, one), "shm_flat");
  EXPECT_EQ(reduce(256 << 10, 9, one), "shm");
  EXPECT_EQ(reduce(8, 4, kShapeSharedMemory), "linear");  // non-blocking
  EXPECT_EQ(reduce(256 << 10, 8, kShapeSharedMemory), "rabenseifner");
  auto bcast = [](size_t b, int p, unsigned shape) { return onHost(CollKind::Bcast, b, p, shape); };
  EXPECT_EQ(bcast(8, 2, one), "shm");
  EXPECT_EQ(bcast((512 << 10) - 1, 2, one), "shm");
  EXPECT_EQ(bcast(512 << 10, 2, one), "binomial");
  EXPECT_EQ(bcast((128 << 10) - 1, 3, one), "linear");
  EXPECT_EQ(bcast(4 << 20, 3, one), "shm");
  EXPECT_EQ(bcast((64 << 10) - 1, 4, one), "linear");
  EXPECT_EQ(bcast(64 << 10, 4, one), "shm");
  EXPECT_EQ(bcast(16 << 10, 8, one), "shm");
  EXPECT_EQ(bcast(16 << 10, 9, one), "binomial");
  EXPECT_EQ(bcast(1 << 20, 4, kShapeSharedMemory), "linear");  // non-blocking
  EXPECT_EQ(bcast(8, 2, kShapeDirect), "binomial");             // not all on one node
  auto allgather = [](size_t b, int p, unsigned shape) {
    return onHost(CollKind::Allgather, b, p, shape);
  };
  EXPECT_EQ(allgather(256 << 10, 2, one), "shm");
  EXPECT_EQ(allgather(64 << 10, 2, one), "ring");
  EXPECT_EQ(allgather(8, 2, one), "shm");
  EXPECT_EQ(allgather(4 << 10, 2, one), "recursive_doubling");
  EXPECT_EQ(allgather(8, 2, kShapeSharedMemory), "recursive_doubling");  // non-blocking
  EXPECT_EQ(allgather(1 << 10, 4, one), "shm");
  EXPECT_EQ(allgather(8, 4, one), "shm");
  EXPECT_EQ(allgather(8, 3, one), "shm");
  EXPECT_EQ(allgather(8, 8, one), "shm");
  EXPECT_EQ(allgather(8, 9, one), "bruck");
  EXPECT_EQ(allgather(8, 4, kShapeSharedMemory), "recursive_doubling");  // non-blocking
  EXPECT_EQ(allgather(1 << 20, 6, kShapeSharedMemory), "scattered");
  EXPECT_EQ(allgather(1 << 20, 16, one), "ring");
  auto allgatherv = [](size_t b, int p, unsigned shape) {
    return onHost(CollKind::Allgatherv, b, p, shape);
  };
  EXPECT_EQ(allgatherv(256 << 10, 2, one), "shm");
  EXPECT_EQ(allgatherv(8, 2, one), "shm");
  EXPECT_EQ(allgatherv(1 << 10, 4, one), "shm");
  EXPECT_EQ(allgatherv(8, 4, one), "shm");
  EXPECT_EQ(allgatherv(1 << 20, 6, kShapeSharedMemory), "scattered");  // non-blocking
  auto alltoall = [](size_t b, int p, unsigned shape) {
    return onHost(CollKind::Alltoall, b, p, shape);
  };
  EXPECT_EQ(alltoall(16, 2, one), "shm");
  EXPECT_EQ(alltoall(64 << 10, 2, one), "shm");
  EXPECT_EQ(alltoall(256 << 10, 2, one), "shm");
  EXPECT_EQ(alltoall(16, 4, one), "shm");
  EXPECT_EQ(alltoall(4 << 20, 3, one), "shm");
  EXPECT_EQ(alltoall((256 << 10) - 1, 8, one), "shm");
  EXPECT_EQ(alltoall(256 << 10, 8, one), "scattered");
  EXPECT_EQ(alltoall(16, 4, kShapeSharedMemory), "scattered");  // non-blocking
  EXPECT_EQ(alltoall(16, 2, kShapeDirect), "pairwise");          // not all on one node
  EXPECT_EQ(alltoall(16, 16, one), "bruck");
  auto reduceScatter = [](size_t b, int p, unsigned shape, bool c = true) {
    return onHost(CollKind::ReduceScatter, b, p, shape, c);
  };
  EXPECT_EQ(reduceScatter(8, 2, one), "shm");
  EXPECT_EQ(reduceScatter(8 << 10, 2, one), "shm");
  EXPECT_EQ(reduceScatter(128 << 10, 2, one), "shm");
  EXPECT_EQ(reduceScatter(128 << 10, 2, kShapeDirect), "ring");  // not all on one node
  EXPECT_EQ(reduceScatter(256 << 10, 2, one), "shm");
  EXPECT_EQ(reduceScatter(8, 5, one), "shm");
  EXPECT_EQ(reduceScatter(4 << 20, 8, one), "shm");
  EXPECT_EQ(reduceScatter(8, 5, one, false), "reduce_scatterv");  // not commutative
  EXPECT_EQ(reduceScatter(8, 4, kShapeSharedMemory), "recursive_halving");  // non-blocking
  EXPECT_EQ(reduceScatter(8, 9, one), "recursive_halving");

  CollArgs a;
  a.kind = CollKind::Allreduce;
  a.count = 1;
  a.typeSize = 4;
  a.reducer.commutative = true;
  setenv("RRT_COLL_ALLREDUCE", "shm", 1);
  reloadSelection();
  EXPECT_STREQ(select(a, 4, one)->name, "shm");
  EXPECT_STREQ(select(a, 4, kShapeSharedMemory)->name, "recursive_doubling");
  EXPECT_STREQ(select(a, 4, kShapeDirect)->name, "recursive_doubling");
  a.reducer.commutative = false;  // shm cannot: the table's choice, which takes any op
  EXPECT_STREQ(select(a, 4, one)->name, "shm_flat");
  unsetenv("RRT_COLL_ALLREDUCE");
  reloadSelection();
  EXPECT_EQ(shmSlotBytes(), 2u << 20);
  setenv("RRT_COLL_SHM_SLOT", "64K", 1);
  reloadSelection();
  EXPECT_EQ(shmSlotBytes(), 64u << 10);
  unsetenv("RRT_COLL_SHM_SLOT");
  reloadSelection();
}

// select() remembers the table's last answer per kind: whatever order the calls come in, it
// answers what the table does (a stale memo would answer the previous call's question).
// Where messages to local ranks go by a single copy from a few KiB (kShapeSingleCopy), the
// message-based algorithms take the 2-rank mid and large sizes (and 4-rank large alltoalls);
// small sizes and other rank counts keep the shared-memory rows.
TEST(CollSelection, SingleCopyRows) {
  const unsigned one = kShapeSharedMemory | kShapeDirect;
  const unsigned single = one | kShapeSingleCopy;
  EXPECT_EQ(onHost(CollKind::Bcast, 8 << 10, 2, single), "binomial");
  EXPECT_EQ(onHost(CollKind::Bcast, (8 << 10) - 1, 2, single), "shm");
  EXPECT_EQ(onHost(CollKind::Bcast, 8 << 10, 2, one), "shm");
  EXPECT_EQ(onHost(CollKind::Bcast, 1 << 20, 4, single), "shm");
  EXPECT_EQ(onHost(CollKind::Bcast, 4 << 10, 4, single), "shm");
  EXPECT_EQ(onHost(CollKind::Bcast, 4 << 10, 4, one), "linear");
  EXPECT_EQ(onHost(CollKind::Reduce, 8 << 10, 4, single), "shm_flat");
  EXPECT_EQ(onHost(CollKind::Reduce, 8 << 10, 4, one), "linear");
  EXPECT_EQ(onHost(CollKind::Reduce, 16 << 10, 2, single), "binomial");
  EXPECT_EQ(onHost(CollKind::Reduce, 512 << 10, 2, single), "binomial");
  EXPECT_EQ(onHost(CollKind::Reduce, 512 << 10, 2, one), "shm");
  EXPECT_EQ(onHost(CollKind::Reduce, 8, 2, single), "shm_flat");
  EXPECT_EQ(onHost(CollKind::Allgather, 4 << 10, 2, single), "ring");
  EXPECT_EQ(onHost(CollKind::Allgather, 4 << 20, 2, single), "ring");
  EXPECT_EQ(onHost(CollKind::Allgather, 8, 2, single), "shm");
  EXPECT_EQ(onHost(CollKind::Allgatherv, 64 << 10, 2, single), "ring");
  EXPECT_EQ(onHost(CollKind::Alltoall, 8 << 10, 2, single), "pairwise");
  EXPECT_EQ(onHost(CollKind::Alltoall, 4 << 10, 2, single), "shm");
  EXPECT_EQ(onHost(CollKind::Alltoall, 256 << 10, 4, single), "scattered");
  EXPECT_EQ(onHost(CollKind::Alltoall, 128 << 10, 4, single), "shm");
  EXPECT_EQ(onHost(CollKind::Alltoall, 256 << 10, 3, single), "shm");
  EXPECT_EQ(onHost(CollKind::Allreduce, 1 << 20, 2, single), "shm");
  // The bit alone (a non-blocking call) does not make a shared-memory row apply.
  EXPECT_EQ(onHost(CollKind::Alltoall, 16, 2, kShapeSharedMemory | kShapeSingleCopy), "pairwise");
}

TEST(CollSelection, RememberedAnswersMatchTheTable) {
  CollArgs a;
  a.kind = CollKind::Allreduce;
  a.typeSize = 1;
  a.reducer.commutative = true;
  for (int round = 0; round < 3; ++round)
    for (int p : {2, 4, 2, 3, 8})
      for (size_t count : {size_t{8}, size_t{4} << 20, size_t{8}, size_t{64} << 10})
        for (bool commutative : {true, false, true}) {
          a.count = count;
          a.reducer.commutative = commutative;
          const Algorithm* want =
              selectFromTable(a.kind, count, p, MemType::Host, commutative, false);
          EXPECT_EQ(select(a, p), want) << "p=" << p << " count=" << count << " c=" << commutative;
          EXPECT_EQ(select(a, p), want);
        }
}

TEST(CollSelection, Overrides) {
  CollArgs a;
  a.kind = CollKind::Allreduce;
  a.count = 1;
  a.typeSize = 4;
  setenv("RRT_COLL_ALLREDUCE", "ring", 1);
  reloadSelection();
  EXPECT_STREQ(select(a, 4)->name, "ring");
  // A non-commutative op cannot run the ring: the table decides.
  a.reducer.commutative = false;
  EXPECT_STREQ(select(a, 4)->name, "recursive_doubling");
  a.reducer.commutative = true;
  setenv("RRT_COLL_ALLREDUCE", "no_such_thing", 1);
  reloadSelection();
  EXPECT_STREQ(select(a, 4)->name, "recursive_doubling");
  setenv("RRT_COLL_ALLREDUCE", "AUTO", 1);
  setenv("RRT_COLL_SEGMENT", "8K", 1);
  reloadSelection();
  EXPECT_STREQ(select(a, 4)->name, "recursive_doubling");
  EXPECT_EQ(segmentBytes(), 8192u);
  unsetenv("RRT_COLL_ALLREDUCE");
  unsetenv("RRT_COLL_SEGMENT");
  reloadSelection();
  EXPECT_EQ(segmentBytes(), 65536u);
}

TEST(CollSelection, NamesAndPrinting) {
  EXPECT_STREQ(kindEnvName(CollKind::ReduceScatter), "RRT_COLL_REDUCE_SCATTER");
  EXPECT_NE(findAlgorithm(CollKind::Bcast, "chain"), nullptr);
  EXPECT_EQ(findAlgorithm(CollKind::Bcast, "ring"), nullptr);
  char* text = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  printSelection(f);
  fclose(f);
  const std::string s(text, len);
  free(text);
  EXPECT_NE(s.find("allreduce (RRT_COLL_ALLREDUCE=auto)"), std::string::npos) << s;
  EXPECT_NE(s.find("ring"), std::string::npos);
  EXPECT_NE(s.find("p=4"), std::string::npos);
}

}  // namespace
}  // namespace rrt::coll
