// The collectives' vector pool (runtime/coll/vector_pool.h): storage given back is handed out
// again (same buffer, no allocation), only when it is large enough, and within its bounds (at
// most Keep vectors, none above MaxEntries). The end-to-end check that collectives allocate
// nothing once warm is tests/steady/steady_allocs.sh.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "runtime/coll/vector_pool.h"

namespace rrt::coll {
namespace {

using Pool = VectorPool<size_t, 2, 100>;

TEST(VectorPool, HandsBackTheStorageItWasGiven) {
  Pool pool;
  std::vector<size_t> v = pool.take(10);
  EXPECT_TRUE(v.empty());
  EXPECT_GE(v.capacity(), 10u);
  v.assign(10, 7);
  const size_t* storage = v.data();
  pool.give(v);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(pool.kept(), 1u);
  std::vector<size_t> w = pool.take(8);  // fits: the same storage, emptied
  EXPECT_EQ(w.data(), storage);
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(VectorPool, TakesOnlyStorageLargeEnough) {
  Pool pool;
  std::vector<size_t> small = pool.take(4), large = pool.take(50);
  const size_t* smallStorage = small.data();
  const size_t* largeStorage = large.data();
  pool.give(large);
  pool.give(small);
  std::vector<size_t> v = pool.take(40);  // the small one does not fit
  EXPECT_EQ(v.data(), largeStorage);
  EXPECT_EQ(pool.kept(), 1u);
  std::vector<size_t> w = pool.take(60);  // nothing fits: fresh storage
  EXPECT_NE(w.data(), smallStorage);
  EXPECT_GE(w.capacity(), 60u);
  EXPECT_EQ(pool.kept(), 1u);
  std::vector<size_t> x = pool.take(2);
  EXPECT_EQ(x.data(), smallStorage);
  EXPECT_EQ(pool.kept(), 0u);
}

TEST(VectorPool, KeepsWithinItsBounds) {
  Pool pool;
  std::vector<size_t> huge = pool.take(101);  // above MaxEntries: not kept
  pool.give(huge);
  EXPECT_EQ(pool.kept(), 0u);
  std::vector<size_t> empty;  // no storage: nothing to keep
  pool.give(empty);
  EXPECT_EQ(pool.kept(), 0u);
  std::vector<size_t> a = pool.take(1), b = pool.take(1), c = pool.take(1);
  pool.give(a);
  pool.give(b);
  pool.give(c);  // Keep is 2: freed
  EXPECT_EQ(pool.kept(), 2u);
}

}  // namespace
}  // namespace rrt::coll
