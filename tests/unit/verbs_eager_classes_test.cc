// The verbs transport's eager size classes without a device: parsing RRT_IB_EAGER_CLASSES /
// RRT_IB_CREDITS, and the class a sender picks for a message at every class boundary, with and
// without credits.
#include <gtest/gtest.h>

#include "runtime/transport/verbs/eager_classes.h"

namespace rrt::transport::verbs {
namespace {

TEST(VerbsEagerClasses, AutoIsOneKiBAndTheEagerBuffer) {
  EagerClasses e;
  ASSERT_EQ(parseEagerClasses("auto", "auto", 8192 + 64, &e), Status::Ok);
  ASSERT_EQ(e.n, 2);
  EXPECT_EQ(e.bufBytes[0], 1024u);
  EXPECT_EQ(e.bufBytes[1], 8256u);
  EXPECT_EQ(e.credits[0], 64u);
  EXPECT_EQ(e.credits[1], 16u);
  // An eager buffer of 1K or less: one class.
  ASSERT_EQ(parseEagerClasses("auto", "auto", 1024, &e), Status::Ok);
  ASSERT_EQ(e.n, 1);
  EXPECT_EQ(e.bufBytes[0], 1024u);
  ASSERT_EQ(parseEagerClasses("auto", "8", 100, &e), Status::Ok);
  ASSERT_EQ(e.n, 1);
  EXPECT_EQ(e.bufBytes[0], 128u);  // rounded up to 64
  EXPECT_EQ(e.credits[0], 8u);
}

TEST(VerbsEagerClasses, ExplicitLists) {
  EagerClasses e;
  ASSERT_EQ(parseEagerClasses("256,2K,8256,64K", "100,50,20,4", 0, &e), Status::Ok);
  ASSERT_EQ(e.n, 4);
  EXPECT_EQ(e.bufBytes[0], 256u);
  EXPECT_EQ(e.bufBytes[1], 2048u);
  EXPECT_EQ(e.bufBytes[2], 8256u);
  EXPECT_EQ(e.bufBytes[3], 65536u);
  EXPECT_EQ(e.credits[0], 100u);
  EXPECT_EQ(e.credits[3], 4u);
  ASSERT_EQ(parseEagerClasses("256,2K", "7", 0, &e), Status::Ok);
  EXPECT_EQ(e.credits[0], 7u);
  EXPECT_EQ(e.credits[1], 7u);
  ASSERT_EQ(parseEagerClasses("100,200", "auto", 0, &e), Status::Ok);
  EXPECT_EQ(e.bufBytes[0], 128u);
  EXPECT_EQ(e.bufBytes[1], 256u);
}

TEST(VerbsEagerClasses, MalformedListsAreRefused) {
  EagerClasses e;
  e.n = 9;  // untouched on failure
  for (const char* sizes : {"", "2K,1K", "1K,1K", "1K,1000", "32", "1K,,2K", "1K,x", "1,2,3,4,5K",
                            "256,512,1K,2K,4K", "-1K", "2G"})
    EXPECT_EQ(parseEagerClasses(sizes, "auto", 0, &e), Status::ErrArg) << sizes;
  for (const char* credits : {"", "1", "0", "4,4,4", "x", "70000", "4,"})
    EXPECT_EQ(parseEagerClasses("1K,8K", credits, 0, &e), Status::ErrArg) << credits;
  EXPECT_EQ(e.n, 9);
}

// Each class boundary: the last byte that fits a class goes there, one more goes to the next.
TEST(VerbsEagerClasses, PickAtEveryBoundary) {
  const uint32_t buf[3] = {256, 2048, 8256};
  const uint32_t full[3] = {5, 5, 5};
  EXPECT_EQ(pickEagerClass(buf, full, 3, 8), 0);
  EXPECT_EQ(pickEagerClass(buf, full, 3, 0), 0);
  EXPECT_EQ(pickEagerClass(buf, full, 3, 256), 0);
  EXPECT_EQ(pickEagerClass(buf, full, 3, 257), 1);
  EXPECT_EQ(pickEagerClass(buf, full, 3, 2048), 1);
  EXPECT_EQ(pickEagerClass(buf, full, 3, 2049), 2);
  EXPECT_EQ(pickEagerClass(buf, full, 3, 8256), 2);
  EXPECT_EQ(pickEagerClass(buf, full, 3, 8257), kClassTooBig);
  EXPECT_EQ(pickEagerClass(buf, full, 1, 257), kClassTooBig);
}

// Out of credits in the class that fits: the next larger class with credits; none: wait.
TEST(VerbsEagerClasses, SpillsUpOnlyWhenOutOfCredits) {
  const uint32_t buf[3] = {256, 2048, 8256};
  const uint32_t noSmall[3] = {0, 1, 1};
  EXPECT_EQ(pickEagerClass(buf, noSmall, 3, 8), 1);
  EXPECT_EQ(pickEagerClass(buf, noSmall, 3, 2049), 2);
  const uint32_t onlyLarge[3] = {0, 0, 3};
  EXPECT_EQ(pickEagerClass(buf, onlyLarge, 3, 8), 2);
  const uint32_t onlySmall[3] = {3, 0, 0};
  EXPECT_EQ(pickEagerClass(buf, onlySmall, 3, 257), kClassNoCredit);  // never spills down
  EXPECT_EQ(pickEagerClass(buf, onlySmall, 3, 8), 0);
  const uint32_t none[3] = {0, 0, 0};
  EXPECT_EQ(pickEagerClass(buf, none, 3, 8), kClassNoCredit);
  EXPECT_EQ(pickEagerClass(buf, none, 3, 9000), kClassTooBig);
}

}  // namespace
}  // namespace rrt::transport::verbs
