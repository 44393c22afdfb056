// Initializers: statistics, bounds, fans, gains and determinism.

#include <gtest/gtest.h>

#include <cmath>

#include "framework/nn/init.h"
#include "framework/ops/ops.h"

namespace skiff::nn::init {
namespace {

struct Stats {
  double mean, std, min, max;
};

Stats stats(const Tensor& t) {
  auto v = contiguous(to(t, DType::Float64)).to_vector<double>();
  double s = 0, s2 = 0, lo = INFINITY, hi = -INFINITY;
  for (double x : v) {
    s += x;
    s2 += x * x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  double m = s / v.size();
  return {m, std::sqrt(s2 / v.size() - m * m), lo, hi};
}

TEST(InitTest, UniformStatisticsAndBounds) {
  Generator g(1);
  Tensor t = empty({200, 100});
  uniform_(t, -2.0, 4.0, &g);
  Stats s = stats(t);
  EXPECT_NEAR(s.mean, 1.0, 0.05);
  EXPECT_NEAR(s.std, 6.0 / std::sqrt(12.0), 0.03);
  EXPECT_GE(s.min, -2.0);
  EXPECT_LT(s.max, 4.0);
}

TEST(InitTest, NormalStatistics) {
  Generator g(2);
  Tensor t = empty({200, 100}, DType::Float64);
  normal_(t, 3.0, 0.5, &g);
  Stats s = stats(t);
  EXPECT_NEAR(s.mean, 3.0, 0.01);
  EXPECT_NEAR(s.std, 0.5, 0.01);
}

TEST(InitTest, TruncNormalStaysInBoundsWithTruncatedStd) {
  Generator g(3);
  Tensor t = empty({200, 100});
  trunc_normal_(t, 0.0, 1.0, -1.0, 1.0, &g);
  Stats s = stats(t);
  EXPECT_GE(s.min, -1.0);
  EXPECT_LE(s.max, 1.0);
  EXPECT_NEAR(s.mean, 0.0, 0.02);
  // Std of N(0,1) truncated to [-1, 1]: sqrt(1 - 2 phi(1) / (2 Phi(1) - 1)) = 0.5379.
  EXPECT_NEAR(s.std, 0.5379, 0.01);
  EXPECT_THROW(trunc_normal_(t, 0.0, 1.0, 10.0, 11.0, &g), ValueError);
  EXPECT_THROW(trunc_normal_(t, 0.0, 1.0, 1.0, -1.0, &g), ValueError);
}

TEST(InitTest, ConstantsAndErrors) {
  Tensor t = empty({3, 2});
  ones_(t);
  EXPECT_EQ(t.to_vector<float>(), std::vector<float>(6, 1.0f));
  zeros_(t);
  EXPECT_EQ(t.to_vector<float>(), std::vector<float>(6, 0.0f));
  constant_(t, 2.5);
  EXPECT_EQ(t.to_vector<float>(), std::vector<float>(6, 2.5f));
  Tensor i = zeros({2}, DType::Int64);
  EXPECT_THROW(uniform_(i), TypeError);
  EXPECT_THROW(normal_(t, 0.0, -1.0), ValueError);
  EXPECT_THROW(uniform_(t, 1.0, 0.0), ValueError);
}

TEST(InitTest, FansOfLinearAndConvWeights) {
  EXPECT_EQ(fan_in_and_fan_out(empty({8, 4})), (std::pair<int64_t, int64_t>{4, 8}));
  EXPECT_EQ(fan_in_and_fan_out(empty({16, 3, 5, 5})), (std::pair<int64_t, int64_t>{75, 400}));
  EXPECT_EQ(fan_in_and_fan_out(empty({7})), (std::pair<int64_t, int64_t>{7, 7}));
  EXPECT_THROW(fan_in_and_fan_out(scalar_tensor(1.0)), ValueError);
}

TEST(InitTest, Gains) {
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::Linear), 1.0);
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::ReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::Tanh), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::LeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(calculate_gain(Nonlinearity::LeakyReLU, std::sqrt(5.0)), std::sqrt(1.0 / 3.0));
}

TEST(InitTest, XavierBoundsAndStd) {
  Generator g(4);
  Tensor t = empty({300, 200});
  xavier_uniform_(t, 1.0, &g);
  double r = std::sqrt(6.0 / 500.0);
  Stats s = stats(t);
  EXPECT_GE(s.min, -r);
  EXPECT_LE(s.max, r);
  EXPECT_NEAR(s.std, r / std::sqrt(3.0), 0.002);
  xavier_normal_(t, 2.0, &g);
  EXPECT_NEAR(stats(t).std, 2.0 * std::sqrt(2.0 / 500.0), 0.002);
}

TEST(InitTest, KaimingFanModesAndGains) {
  Generator g(5);
  Tensor t = empty({400, 100});  // fan_in 100, fan_out 400
  kaiming_normal_(t, 0.0, FanMode::FanIn, Nonlinearity::ReLU, &g);
  EXPECT_NEAR(stats(t).std, std::sqrt(2.0 / 100.0), 0.003);
  kaiming_normal_(t, 0.0, FanMode::FanOut, Nonlinearity::ReLU, &g);
  EXPECT_NEAR(stats(t).std, std::sqrt(2.0 / 400.0), 0.0015);
  kaiming_uniform_(t, 0.0, FanMode::FanIn, Nonlinearity::Tanh, &g);
  double bound = std::sqrt(3.0) * (5.0 / 3.0) / 10.0;
  Stats s = stats(t);
  EXPECT_GE(s.min, -bound);
  EXPECT_LE(s.max, bound);
  EXPECT_GT(s.max, 0.95 * bound);
  kaiming_uniform_(t, std::sqrt(5.0), FanMode::FanIn, Nonlinearity::LeakyReLU, &g);
  EXPECT_LE(stats(t).max, 1.0 / 10.0);  // PyTorch's Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in))
  kaiming_uniform_(t, 0.0, FanMode::FanIn, Nonlinearity::Linear, &g);
  EXPECT_NEAR(stats(t).std, 0.1, 0.002);
}

TEST(InitTest, SameSeedSameValues) {
  Tensor a = empty({5, 7}), b = empty({5, 7}), c = empty({5, 7});
  Generator g1(42), g2(42), g3(43);
  kaiming_uniform_(a, 0.0, FanMode::FanIn, Nonlinearity::ReLU, &g1);
  kaiming_uniform_(b, 0.0, FanMode::FanIn, Nonlinearity::ReLU, &g2);
  kaiming_uniform_(c, 0.0, FanMode::FanIn, Nonlinearity::ReLU, &g3);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_NE(a.to_vector<float>(), c.to_vector<float>());
  manual_seed(7);
  trunc_normal_(a, 0, 0.02, -0.04, 0.04);
  manual_seed(7);
  trunc_normal_(b, 0, 0.02, -0.04, 0.04);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
}

TEST(InitTest, WritesThroughViewsAndParameters) {
  Tensor base = zeros({4, 4}).set_requires_grad();
  Tensor col = select(detach(base), 1, 2);  // strided view
  constant_(col, 3.0);
  auto v = base.to_vector<float>();
  EXPECT_EQ(v[2], 3.0f);
  EXPECT_EQ(v[6], 3.0f);
  EXPECT_EQ(v[0], 0.0f);
}

}  // namespace
}  // namespace skiff::nn::init

namespace skiff::nn::init {
namespace {

TEST(InitTest, SkipRandomInitGuardLeavesTensorsAloneWhileItLives) {
  Tensor t = full({4, 3}, 7.0);
  {
    SkipRandomInitGuard outer;
    EXPECT_TRUE(SkipRandomInitGuard::active());
    {
      SkipRandomInitGuard inner;  // nests
    }
    EXPECT_TRUE(SkipRandomInitGuard::active());
    uniform_(t, -1, 1);
    normal_(t);
    kaiming_uniform_(t);
    xavier_normal_(t);
    EXPECT_EQ(amax(abs(t - 7.0)).item<double>(), 0.0);
    zeros_(t);  // constant initializers still run
    EXPECT_EQ(amax(abs(t)).item<double>(), 0.0);
  }
  EXPECT_FALSE(SkipRandomInitGuard::active());
  uniform_(t, 1, 2);
  EXPECT_GE(amin(t).item<double>(), 1.0);
}

}  // namespace
}  // namespace skiff::nn::init
