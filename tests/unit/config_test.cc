#include <cstdlib>

#include <gtest/gtest.h>

#include "runtime/core/config.h"

namespace rrt::config {
namespace {

TEST(Config, ParsesSizes) {
  uint64_t v = 0;
  EXPECT_EQ(parseSize("0", &v), Status::Ok);
  EXPECT_EQ(v, 0u);
  EXPECT_EQ(parseSize("4096", &v), Status::Ok);
  EXPECT_EQ(v, 4096u);
  EXPECT_EQ(parseSize("64K", &v), Status::Ok);
  EXPECT_EQ(v, 65536u);
  EXPECT_EQ(parseSize("2m", &v), Status::Ok);
  EXPECT_EQ(v, 2u << 20);
  EXPECT_EQ(parseSize("1GiB", &v), Status::Ok);
  EXPECT_EQ(v, 1u << 30);
  EXPECT_EQ(parseSize("1G", &v), Status::Ok);
}

TEST(Config, RejectsBadSizes) {
  uint64_t v = 7;
  for (const char* bad : {"", "-1", "+3", "12Q", "K", "1KK", "99999999999999999999", "1e3",
                          "17179869184G"}) {
    EXPECT_EQ(parseSize(bad, &v), Status::ErrArg) << bad;
  }
  EXPECT_EQ(v, 7u);
}

TEST(Config, ParsesBools) {
  bool b = false;
  EXPECT_EQ(parseBool("on", &b), Status::Ok);
  EXPECT_TRUE(b);
  EXPECT_EQ(parseBool("OFF", &b), Status::Ok);
  EXPECT_FALSE(b);
  EXPECT_EQ(parseBool("1", &b), Status::Ok);
  EXPECT_TRUE(b);
  EXPECT_EQ(parseBool("maybe", &b), Status::ErrArg);
}

TEST(Config, ReadsEnvironmentAndDefaults) {
  unsetenv("RRT_EAGER_LIMIT");
  setenv("RRT_SHM_RING_BYTES", "1M", 1);
  reload();
  EXPECT_TRUE(isAuto(Tunable::EagerLimit));
  EXPECT_FALSE(fromEnvironment(Tunable::EagerLimit));
  EXPECT_EQ(sizeOr(Tunable::EagerLimit, 1234), 1234u);
  EXPECT_TRUE(fromEnvironment(Tunable::ShmRingBytes));
  EXPECT_EQ(sizeOr(Tunable::ShmRingBytes, 1), 1u << 20);
  setenv("RRT_EAGER_LIMIT", "garbage", 1);
  reload();
  EXPECT_EQ(sizeOr(Tunable::EagerLimit, 99), 99u);  // garbage falls back (with a warning)
  unsetenv("RRT_EAGER_LIMIT");
  unsetenv("RRT_SHM_RING_BYTES");
  reload();
}

TEST(Config, EveryRowHasNameDefaultAndHelp) {
  for (int i = 0; i < static_cast<int>(Tunable::Count); ++i) {
    const Row& r = row(static_cast<Tunable>(i));
    EXPECT_NE(r.env[0], '\0');
    EXPECT_NE(r.defValue[0], '\0');
    EXPECT_GT(strlen(r.help), 10u);
  }
}

}  // namespace
}  // namespace rrt::config
