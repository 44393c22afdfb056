#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "framework/core/threading.h"
#include "framework/ops/nn/norm.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_gradcheck;
using testing::rand_leaf;

TEST(DropoutTest, KeepsAboutOneMinusPAndScalesSurvivors) {
  Generator g(1);
  Tensor x = full({200, 500}, 2.0, DType::Float32);
  Tensor y = dropout(x, 0.3, true, &g);
  std::vector<float> v = y.to_vector<float>();
  int64_t kept = 0;
  for (float e : v) {
    if (e != 0.f) {
      ++kept;
      ASSERT_FLOAT_EQ(e, float(2.0 / 0.7));
    }
  }
  EXPECT_NEAR(double(kept) / double(v.size()), 0.7, 0.01);
}

TEST(DropoutTest, SameSeedSameMaskOnAnyThreadCount) {
  Tensor x = ones({300, 400}, DType::Float64);  // above the parallel grain
  const int saved = num_threads();
  set_num_threads(1);
  Generator g1(42);
  std::vector<double> one = dropout(x, 0.5, true, &g1).to_vector<double>();
  set_num_threads(4);
  Generator g4(42);
  std::vector<double> four = dropout(x, 0.5, true, &g4).to_vector<double>();
  set_num_threads(saved);
  EXPECT_EQ(one, four);
  Generator other(43);
  EXPECT_NE(dropout(x, 0.5, true, &other).to_vector<double>(), one);
  // Consecutive calls advance the generator: a fresh mask each time.
  EXPECT_NE(dropout(x, 0.5, true, &g1).to_vector<double>(), one);
}

TEST(DropoutTest, IdentityAndZeroCases) {
  Generator g(2);
  Tensor x = randn({4, 5}, DType::Float32, &g);
  EXPECT_TRUE(dropout(x, 0.5, false, &g).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, true, &g).is_same(x));
  std::vector<float> z = dropout(x, 1.0, true, &g).to_vector<float>();
  for (float e : z) EXPECT_EQ(e, 0.f);
  Tensor h = dropout(to(x, DType::Float16), 0.5, true, &g);
  EXPECT_EQ(h.dtype(), DType::Float16);
  Tensor strided = dropout(t(x), 0.5, true, &g);
  EXPECT_EQ(strided.shape(), (Shape{5, 4}));
  EXPECT_EQ(dropout(zeros({0, 3}), 0.5, true, &g).shape(), (Shape{0, 3}));
}

TEST(DropoutTest, RejectsBadProbabilityAndDtype) {
  Tensor x = ones({3});
  EXPECT_THROW(dropout(x, -0.1), ValueError);
  EXPECT_THROW(dropout(x, 1.5), ValueError);
  EXPECT_THROW(dropout(arange(3), 0.5), TypeError);
}

TEST(DropoutTest, GradientIsTheScaledMask) {
  Generator g(3);
  Tensor x = rand_leaf({6, 7}, 4, 1.0, 2.0);  // no zeros, so y != 0 marks the mask
  Tensor y = dropout(x, 0.25, true, &g);
  backward(sum(y));
  std::vector<double> yv = y.to_vector<double>(), gv = x.grad().to_vector<double>();
  for (size_t i = 0; i < yv.size(); ++i) EXPECT_DOUBLE_EQ(gv[i], yv[i] != 0 ? 1.0 / 0.75 : 0.0);
}

TEST(DropoutTest, Gradcheck) {
  Tensor x = rand_leaf({4, 5}, 5);
  // A fresh generator per call keeps the mask fixed across the finite differences.
  expect_gradcheck([](const std::vector<Tensor>& in) {
    Generator g(9);
    return dropout(in[0], 0.4, true, &g);
  }, {x});
}

}  // namespace
}  // namespace skiff
