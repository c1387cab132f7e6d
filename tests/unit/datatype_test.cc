#include <gtest/gtest.h>

#include "runtime/core/datatype.h"

namespace rrt::core {
namespace {

TEST(Datatype, PredefinedSizes) {
  EXPECT_EQ(typeLookup(RRT_BYTE)->size, 1u);
  EXPECT_EQ(typeLookup(RRT_INT64)->size, 8u);
  EXPECT_EQ(typeLookup(RRT_FLOAT16)->size, 2u);
  EXPECT_EQ(typeLookup(RRT_BFLOAT16)->size, 2u);
  EXPECT_EQ(typeLookup(RRT_DOUBLE_INT)->size, 16u);
  EXPECT_EQ(typeLookup(RRT_2INT)->size, 8u);
  EXPECT_EQ(typeLookup(-5), nullptr);
  EXPECT_EQ(typeLookup(RRT_PREDEFINED_TYPE_COUNT), nullptr);
  EXPECT_EQ(typeLookup(kFirstDerived), nullptr);
}

TEST(Datatype, ContiguousNestsAndFrees) {
  rrt_datatype_t t1, t2;
  ASSERT_EQ(typeContiguous(3, RRT_INT32, &t1), Status::Ok);
  ASSERT_EQ(typeContiguous(5, t1, &t2), Status::Ok);
  EXPECT_EQ(typeLookup(t2)->size, 60u);
  EXPECT_EQ(typeLookup(t2)->base, RRT_INT32);
  EXPECT_EQ(typeLookup(t2)->baseCount, 15u);
  rrt_datatype_t keep = t1;
  EXPECT_EQ(typeFree(&t1), Status::Ok);
  EXPECT_EQ(t1, RRT_DATATYPE_NULL);
  EXPECT_EQ(typeLookup(keep), nullptr);
  EXPECT_EQ(typeFree(&keep), Status::ErrType);  // double free
  rrt_datatype_t predefined = RRT_INT32;
  EXPECT_EQ(typeFree(&predefined), Status::ErrType);
  EXPECT_EQ(typeContiguous(0, RRT_INT32, &t1), Status::ErrCount);
  EXPECT_EQ(typeContiguous(2, 999, &t1), Status::ErrType);
  EXPECT_EQ(typeFree(&t2), Status::Ok);
}

}  // namespace
}  // namespace rrt::core
