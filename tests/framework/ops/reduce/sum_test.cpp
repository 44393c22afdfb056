#include <gtest/gtest.h>

#include "framework/ops/ops.h"

namespace skiff {

TEST(ReduceTest, SumOverDimsWithKeepdim) {
  Tensor x = reshape(arange(0.0, 24.0, 1.0, DType::Float32), {2, 3, 4});
  EXPECT_EQ(sum(x).item<float>(), 276.f);
  Tensor s = sum(x, {0, 2}, true);
  EXPECT_EQ(s.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{60, 92, 124}));
  EXPECT_EQ(sum(x, {-1}).shape(), (Shape{2, 3}));
  EXPECT_EQ(sum(arange(4)).dtype(), DType::Int64);
  EXPECT_FLOAT_EQ(mean(x, {1}).to_vector<float>()[0], 4.f);
  EXPECT_THROW(sum(x, {3}), IndexError);
}

TEST(ReduceTest, LongFloatSumIsAccurate) {
  Tensor x = full({10000000}, 0.1, DType::Float32);
  EXPECT_NEAR(sum(x).item<double>(), 1e6, 1.0);
}

TEST(ReduceTest, SumOfStridedView) {
  Tensor x = reshape(arange(0.0, 6.0, 1.0, DType::Float64), {2, 3});
  EXPECT_EQ(sum(t(x), {1}).to_vector<double>(), (std::vector<double>{3, 5, 7}));
}

}  // namespace skiff
