// copySmall against memcpy: every length through the inline cases and past them, at every
// alignment of source and destination, with the bytes around the destination untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "runtime/core/small_copy.h"

namespace {

TEST(CopySmall, EveryLengthAndAlignmentCopiesExactlyTheBytes) {
  constexpr size_t kGuard = 40;
  for (size_t n = 0; n <= 80; ++n) {
    for (size_t so = 0; so < 8; ++so) {
      for (size_t dof = 0; dof < 8; ++dof) {
        std::vector<uint8_t> src(n + 16), dst(n + 2 * kGuard, 0xee);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + n + 1);
        rrt::core::copySmall(dst.data() + kGuard + dof, src.data() + so, n);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= kGuard + dof && i < kGuard + dof + n;
          const uint8_t want = inside ? src[so + (i - kGuard - dof)] : 0xee;
          ASSERT_EQ(dst[i], want) << "n=" << n << " src+" << so << " dst+" << dof << " at " << i;
        }
      }
    }
  }
}

TEST(CopySmall, ZeroLengthTouchesNothingAndAcceptsNull) {
  uint8_t d = 0x5a;
  rrt::core::copySmall(&d, nullptr, 0);
  EXPECT_EQ(d, 0x5a);
  rrt::core::copySmall(nullptr, nullptr, 0);
}

}  // namespace
