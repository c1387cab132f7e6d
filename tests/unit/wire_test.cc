#include <cstddef>

#include <gtest/gtest.h>

#include "runtime/proto/wire.h"

namespace rrt::proto::wire {
namespace {

TEST(Wire, HeaderLayout) {
  EXPECT_EQ(sizeof(MatchHeader), 16u);
  EXPECT_EQ(offsetof(MatchHeader, ctx), 0u);
  EXPECT_EQ(offsetof(MatchHeader, src), 4u);
  EXPECT_EQ(offsetof(MatchHeader, tag), 8u);
  EXPECT_EQ(offsetof(MatchHeader, seq), 12u);
  EXPECT_EQ(offsetof(EagerHeader, total), 16u);
  EXPECT_EQ(offsetof(EagerSyncHeader, sreq), 24u);
  EXPECT_EQ(offsetof(RtsHeader, sreq), 16u);
  EXPECT_EQ(offsetof(RtsHeader, mode), 40u);
  EXPECT_EQ(offsetof(CtsHeader, mode), 32u);
  EXPECT_EQ(sizeof(DataHeader), 16u);
  EXPECT_EQ(sizeof(FinHeader), 16u);
  EXPECT_EQ(offsetof(CancelHeader, seq), 4u);
  EXPECT_EQ(offsetof(CancelHeader, sreq), 8u);
  EXPECT_EQ(offsetof(CancelAckHeader, cancelled), 8u);
}

TEST(Wire, ControlMessagesFitAPendingSlot) {
  // A queued CTS carries its header and the largest rkey.
  EXPECT_LE(sizeof(CtsHeader) + transport::kMaxRkeyBytes, 255u);
  // Cancel and its answer queue in the same slots (PendingCtl::bytes).
  EXPECT_LE(sizeof(CancelHeader), sizeof(CtsHeader) + transport::kMaxRkeyBytes);
  EXPECT_LE(sizeof(CancelAckHeader), sizeof(CtsHeader) + transport::kMaxRkeyBytes);
}

}  // namespace
}  // namespace rrt::proto::wire
