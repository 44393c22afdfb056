#include "framework/core/dtype.h"

#include <gtest/gtest.h>

#include "framework/core/error.h"

namespace skiff {

TEST(DTypeTest, PromotionFollowsNumPyCategories) {
  EXPECT_EQ(promote_types(DType::Int32, DType::Float32), DType::Float32);
  EXPECT_EQ(promote_types(DType::Int64, DType::Int32), DType::Int64);
  EXPECT_EQ(promote_types(DType::UInt8, DType::Int8), DType::Int32);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Bool, DType::UInt8), DType::UInt8);
  EXPECT_EQ(promote_types(DType::Complex64, DType::Float64), DType::Complex128);
  EXPECT_EQ(promote_types(DType::Float64, DType::Float32), DType::Float64);
}

TEST(DTypeTest, NamesRoundTripAndUnknownNameIsAnError) {
  for (int i = 0; i < kNumDTypes; ++i) EXPECT_EQ(dtype_from_name(dtype_name(DType(i))), DType(i));
  EXPECT_EQ(dtype_from_name("bf16"), DType::BFloat16);
  EXPECT_THROW(dtype_from_name("float128"), ValueError);
}

TEST(DTypeTest, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(float(Half(1.0f)), 1.0f);
  EXPECT_EQ(float(Half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(float(Half(70000.0f))));
  EXPECT_EQ(float(Half(1.0f + 1.0f / 4096)), 1.0f);  // below half an ulp (2^-11) -> rounds down
  EXPECT_EQ(Half(5.96046448e-8f).bits, 1);           // smallest subnormal
  EXPECT_EQ(float(BFloat16(1.00390625f)), 1.0f);     // tie rounds to even
  EXPECT_EQ(float(BFloat16(3.0f)), 3.0f);
}

}  // namespace skiff
