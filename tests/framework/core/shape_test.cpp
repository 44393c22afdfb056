#include "framework/core/shape.h"

#include <gtest/gtest.h>

namespace skiff {

TEST(ShapeTest, BroadcastFollowsNumPy) {
  EXPECT_EQ(broadcast_shapes({3, 1}, {4}), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({5, 1, 7}, {6, 1}), (Shape{5, 6, 7}));
  EXPECT_THROW(broadcast_shapes({3}, {4}), ShapeError);
}

TEST(ShapeTest, RejectsMoreThanEightDims) {
  Shape s;
  for (int i = 0; i < kMaxDims; ++i) s.push_back(1);
  EXPECT_THROW(s.push_back(1), ShapeError);
}

TEST(ShapeTest, WrapDimNamesTheRange) {
  EXPECT_EQ(wrap_dim(-1, 3), 2);
  try {
    wrap_dim(3, 3, "sum");
    FAIL();
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("sum"), std::string::npos);
  }
}

TEST(ShapeTest, ContiguousStrides) { EXPECT_EQ(contiguous_strides({2, 3, 4}), (Shape{12, 4, 1})); }

}  // namespace skiff
