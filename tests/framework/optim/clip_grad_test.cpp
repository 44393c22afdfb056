#include "framework/optim/clip_grad.h"

#include <gtest/gtest.h>

#include <cmath>

namespace skiff::optim {
namespace {

Tensor with_grad(std::vector<double> values, std::vector<double> grad) {
  Tensor p = from_vector<double>(values).set_requires_grad();
  p.set_grad(from_vector<double>(grad));
  return p;
}

TEST(ClipGradNormTest, ScalesToMaxNormAndReturnsTotalNorm) {
  Tensor a = with_grad({0, 0}, {3, 0}), b = with_grad({0}, {4}), c = from_vector<double>({1.0}).set_requires_grad();
  const double total = clip_grad_norm_({a, b, c}, 1.0);
  EXPECT_DOUBLE_EQ(total, 5.0);
  const double coef = 1.0 / (5.0 + 1e-6);
  EXPECT_DOUBLE_EQ(a.grad().to_vector<double>()[0], 3 * coef);
  EXPECT_DOUBLE_EQ(b.grad().to_vector<double>()[0], 4 * coef);
  EXPECT_FALSE(c.grad().defined());
  EXPECT_NEAR(grad_norm({a, b}), 1.0, 1e-6);
}

TEST(ClipGradNormTest, LeavesSmallGradientsUntouched) {
  Tensor a = with_grad({0, 0}, {0.3, -0.4});
  EXPECT_DOUBLE_EQ(clip_grad_norm_({a}, 1.0), 0.5);
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{0.3, -0.4}));
}

TEST(ClipGradNormTest, SupportsOtherNormTypes) {
  Tensor a = with_grad({0, 0}, {1, -2}), b = with_grad({0}, {3});
  EXPECT_DOUBLE_EQ(grad_norm({a, b}, 1.0), 6.0);
  EXPECT_DOUBLE_EQ(grad_norm({a, b}, kInfNorm), 3.0);
  EXPECT_NEAR(grad_norm({a, b}, 3.0), std::cbrt(1 + 8 + 27), 1e-12);
  EXPECT_DOUBLE_EQ(clip_grad_norm_({a, b}, 1.5, kInfNorm), 3.0);
  EXPECT_NEAR(b.grad().to_vector<double>()[0], 3 * 1.5 / (3 + 1e-6), 1e-12);
  EXPECT_THROW(grad_norm({a}, 0.0), ValueError);
}

TEST(ClipGradNormTest, WorksOnFloat32AndReportsNonFinite) {
  Tensor a = from_vector<float>({0, 0}).set_requires_grad();
  a.set_grad(from_vector<float>({6, 8}));
  EXPECT_NEAR(clip_grad_norm_({a}, 5.0), 10.0, 1e-6);
  EXPECT_NEAR(a.grad().to_vector<float>()[0], 3.0f, 1e-5);
  Tensor n = with_grad({0}, {std::nan("")});
  EXPECT_THROW(clip_grad_norm_({n}, 1.0, 2.0, /*error_if_nonfinite=*/true), ValueError);
  EXPECT_TRUE(std::isnan(clip_grad_norm_({n}, 1.0)));
}

TEST(ClipGradValueTest, ClampsEveryElement) {
  Tensor a = with_grad({0, 0, 0}, {-5, 0.2, 7});
  clip_grad_value_({a}, 1.0);
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{-1.0, 0.2, 1.0}));
  EXPECT_THROW(clip_grad_value_({a}, -1.0), ValueError);
}

}  // namespace
}  // namespace skiff::optim
