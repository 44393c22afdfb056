// RMSNorm and the rotary-embedding helpers (framework/nn/norm.h, rotary.h) against
// hand computations: the normalization formula, RoPE on a 4-wide head, the inverse
// frequencies of every scaling type, and float64 gradient checks.

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "framework/nn/nn.h"
#include "tests/framework/nn/nn_test_utils.h"

namespace skiff::nn {
namespace {

using testing::expect_module_gradcheck;
using testing::rand64;
using testing::values;

TEST(RMSNormTest, MatchesHandComputation) {
  RMSNorm norm(4, 1e-5);
  std::vector<float> w{1.0f, 0.5f, 2.0f, -1.0f};
  std::copy(w.begin(), w.end(), norm.weight.data<float>());
  Tensor x = from_vector<float>({1, 2, 3, 4, -1, 0, 0, 1}, {2, 4});
  std::vector<double> y = values(norm(x));
  // Row 0: mean of squares (1 + 4 + 9 + 16) / 4 = 7.5; row 1: (1 + 0 + 0 + 1) / 4 = 0.5.
  double r0 = 1 / std::sqrt(7.5 + 1e-5), r1 = 1 / std::sqrt(0.5 + 1e-5);
  std::vector<double> want{1 * r0 * 1, 2 * r0 * 0.5, 3 * r0 * 2, 4 * r0 * -1, -1 * r1, 0, 0, 1 * r1 * -1};
  ASSERT_EQ(y.size(), want.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << i;
  EXPECT_THROW(norm(from_vector<float>({1, 2, 3}, {1, 3})), ShapeError);
  EXPECT_THROW(RMSNorm(0), ValueError);
  EXPECT_NE(norm.str().find("RMSNorm(4, eps=1e-05)"), std::string::npos) << norm.str();
}

TEST(RMSNormTest, HalfInputNormalizesInFloat32) {
  RMSNorm norm(3);
  Tensor x = from_vector<float>({300, -200, 100}, {1, 3});
  Tensor y = norm(to(x, DType::Float16));
  EXPECT_EQ(y.dtype(), DType::Float32);  // the float32 weight promotes, as in HF
  std::vector<double> v = values(y), ref = values(norm(x));
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], ref[i], 2e-3);
}

TEST(RMSNormTest, Gradcheck) {
  RMSNorm norm(5, 1e-3);
  norm.to(DType::Float64);
  std::vector<double> w{0.5, 1.5, -1, 2, 1};
  std::copy(w.begin(), w.end(), norm.weight.data<double>());
  Tensor x = rand64({3, 5}, 11, true);
  expect_module_gradcheck([&] { return norm(x); }, {x, norm.weight});
}

TEST(RotaryTest, RotatesPairsOfHalvesByPositionTimesFrequency) {
  // head_dim 4, theta 100: inv_freq = [1, 100^(-1/2)] = [1, 0.1]; position 2 -> angles [2, 0.2].
  auto f = rope_inv_frequencies(4, 100.0);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_NEAR(f[1], 0.1, 1e-15);
  auto [cos, sin] = rope_cos_sin(from_vector<int64_t>({0, 2}, {1, 2}), f);  // [1, 2, 4]
  EXPECT_EQ(cos.shape(), (Shape{1, 2, 4}));
  Tensor x = from_vector<float>({9, 9, 9, 9, 1, 2, 3, 4}, {1, 1, 2, 4});  // [B, H, T, D]
  std::vector<double> y = values(apply_rotary(x, cos, sin));
  // Position 0 is the identity; position 2 rotates (x1, x2) = ([1, 2], [3, 4]).
  double c0 = std::cos(2.0), s0 = std::sin(2.0), c1 = std::cos(0.2), s1 = std::sin(0.2);
  std::vector<double> want{9, 9, 9, 9, 1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6) << i;
  std::vector<double> h = values(rotate_half(from_vector<float>({1, 2, 3, 4}, {4})));
  EXPECT_EQ(h, (std::vector<double>{-3, -4, 1, 2}));
  EXPECT_THROW(rotate_half(from_vector<float>({1, 2, 3}, {3})), ShapeError);
  EXPECT_THROW(rope_inv_frequencies(5, 100.0), ValueError);
}

TEST(RotaryTest, ScaledFrequencies) {
  RopeScaling lin{RopeScaling::Type::Linear, 2.0};
  auto f = rope_inv_frequencies(4, 100.0, lin);
  EXPECT_NEAR(f[0], 0.5, 1e-15);
  EXPECT_NEAR(f[1], 0.05, 1e-15);

  // llama3, head_dim 8, theta 10000: f = [1, 0.1, 0.01, 0.001], wavelengths 2 pi / f.
  // old context 16: low-frequency wavelength 16 / 1, high-frequency one 16 / 4 = 4.
  RopeScaling l3{RopeScaling::Type::Llama3, 8.0, 1.0, 4.0, 16};
  f = rope_inv_frequencies(8, 10000.0, l3);
  double wl = 2 * std::numbers::pi;  // 6.28: between 4 and 16, smoothed
  double smooth = (16 / wl - 1.0) / (4.0 - 1.0);
  EXPECT_NEAR(f[0], (1 - smooth) * 1.0 / 8 + smooth * 1.0, 1e-12);
  EXPECT_NEAR(f[1], 0.1 / 8, 1e-12);  // wavelength 62.8 > 16: divided
  EXPECT_NEAR(f[2], 0.01 / 8, 1e-12);
  EXPECT_NEAR(f[3], 0.001 / 8, 1e-12);
  // The wavelength 6.28 in the other two bands: above the low-frequency wavelength 4 / 1
  // (old context 4) it is divided; below the high-frequency wavelength 64 / 4 = 16 it is kept.
  RopeScaling l3b{RopeScaling::Type::Llama3, 8.0, 1.0, 2.0, 4};
  f = rope_inv_frequencies(4, 10000.0, l3b);
  EXPECT_NEAR(f[0], 1.0 / 8, 1e-12);
  RopeScaling l3c{RopeScaling::Type::Llama3, 8.0, 1.0, 4.0, 64};
  f = rope_inv_frequencies(4, 10000.0, l3c);
  EXPECT_NEAR(f[0], 1.0, 1e-12);

  // Dynamic NTK: head_dim 4, theta 100, factor 2, limit 8. At 16 tokens theta' = 100 * (2 * 16 / 8 - 1)^(4 / 2) = 900.
  RopeScaling dyn{RopeScaling::Type::Dynamic, 2.0};
  f = rope_inv_frequencies(4, 100.0, dyn, 16, 8);
  EXPECT_NEAR(f[1], 1.0 / 30.0, 1e-12);
  f = rope_inv_frequencies(4, 100.0, dyn, 8, 8);  // within the limit: unchanged
  EXPECT_NEAR(f[1], 0.1, 1e-12);
  EXPECT_THROW(rope_inv_frequencies(4, 100.0, RopeScaling{RopeScaling::Type::Llama3, 8.0, 1.0, 4.0, 0}), ValueError);
}

TEST(RotaryTest, Gradcheck) {
  auto [cos, sin] = rope_cos_sin(from_vector<int64_t>({3, 5, 7}, {1, 3}), rope_inv_frequencies(4, 10.0));
  Tensor c = to(cos, DType::Float64), s = to(sin, DType::Float64);
  Tensor x = rand64({1, 2, 3, 4}, 5, true);
  expect_module_gradcheck([&] { return apply_rotary(x, c, s); }, {x});
}

}  // namespace
}  // namespace skiff::nn
