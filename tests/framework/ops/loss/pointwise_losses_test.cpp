#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

Tensor f64(const std::vector<double>& v, const Shape& s) { return from_vector(v, s); }

// Reduces a naive per-element loss vector the way `r` says, as a tensor of the expected shape.
Tensor reduce_reference(const std::vector<double>& per_element, const Shape& shape, Reduction r) {
  double total = 0;
  for (double v : per_element) total += v;
  if (r == Reduction::None) return f64(per_element, shape);
  if (r == Reduction::Sum) return scalar_tensor(total, DType::Float64);
  return scalar_tensor(total / double(per_element.size()), DType::Float64);
}

const std::vector<double> kInput = {0.5, -1.25, 2.0, 0.0, 3.5, -0.75};
const std::vector<double> kTarget = {1.0, -1.0, -0.5, 0.0, 1.0, 0.25};
const Shape kShape = {2, 3};

TEST(LossReductionTest, ParsesNames) {
  EXPECT_EQ(reduction_from_string("none"), Reduction::None);
  EXPECT_EQ(reduction_from_string("mean"), Reduction::Mean);
  EXPECT_EQ(reduction_from_string("sum"), Reduction::Sum);
  EXPECT_STREQ(reduction_name(Reduction::Sum), "sum");
  EXPECT_THROW(reduction_from_string("average"), ValueError);
}

TEST(MseLossTest, MatchesNaiveForEveryReduction) {
  std::vector<double> ref;
  for (size_t i = 0; i < kInput.size(); ++i) ref.push_back((kInput[i] - kTarget[i]) * (kInput[i] - kTarget[i]));
  for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean})
    expect_allclose(mse_loss(f64(kInput, kShape), f64(kTarget, kShape), r), reduce_reference(ref, kShape, r), 1e-12);
  Tensor f32 = mse_loss(to(f64(kInput, kShape), DType::Float32), f64(kTarget, kShape));
  EXPECT_EQ(f32.dtype(), DType::Float32);
  EXPECT_EQ(f32.dim(), 0);
}

TEST(MseLossTest, RejectsBadShapesAndDtypes) {
  EXPECT_THROW(mse_loss(zeros({2, 3}), zeros({3, 2})), ShapeError);
  EXPECT_THROW(mse_loss(zeros({2, 3}), zeros({3})), ShapeError);
  EXPECT_THROW(mse_loss(zeros({2}, DType::Int64), zeros({2})), TypeError);
}

TEST(MseLossTest, Gradcheck) {
  Tensor x = rand_leaf({2, 3}, 1), t = rand_leaf({2, 3}, 2);
  expect_gradcheck([](const std::vector<Tensor>& v) { return mse_loss(v[0], v[1]); }, {x, t});
  expect_gradgradcheck([](const std::vector<Tensor>& v) { return mse_loss(v[0], v[1], Reduction::Sum); }, {x, t});
}

TEST(L1LossTest, MatchesNaiveAndHasZeroGradientAtTies) {
  std::vector<double> ref;
  for (size_t i = 0; i < kInput.size(); ++i) ref.push_back(std::abs(kInput[i] - kTarget[i]));
  for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean})
    expect_allclose(l1_loss(f64(kInput, kShape), f64(kTarget, kShape), r), reduce_reference(ref, kShape, r), 1e-12);
  Tensor x = f64(kInput, kShape).set_requires_grad();
  backward(l1_loss(x, f64(kTarget, kShape), Reduction::Sum));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{-1, -1, 1, 0, 1, -1}));
}

TEST(L1LossTest, Gradcheck) {
  Tensor x = rand_leaf({3, 2}, 3), t = rand_leaf({3, 2}, 4);
  expect_gradcheck([](const std::vector<Tensor>& v) { return l1_loss(v[0], v[1]); }, {x, t});
}

TEST(SmoothL1LossTest, MatchesNaiveForSeveralBetas) {
  for (double beta : {1.0, 0.5, 2.5}) {
    std::vector<double> ref;
    for (size_t i = 0; i < kInput.size(); ++i) {
      double d = std::abs(kInput[i] - kTarget[i]);
      ref.push_back(d < beta ? 0.5 * d * d / beta : d - 0.5 * beta);
    }
    for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean})
      expect_allclose(smooth_l1_loss(f64(kInput, kShape), f64(kTarget, kShape), r, beta),
                      reduce_reference(ref, kShape, r), 1e-12);
  }
  // beta = 0 is the L1 loss.
  expect_allclose(smooth_l1_loss(f64(kInput, kShape), f64(kTarget, kShape), Reduction::None, 0.0),
                  l1_loss(f64(kInput, kShape), f64(kTarget, kShape), Reduction::None), 1e-12);
  EXPECT_THROW(smooth_l1_loss(f64(kInput, kShape), f64(kTarget, kShape), Reduction::Mean, -1.0), ValueError);
}

TEST(SmoothL1LossTest, Gradcheck) {
  Tensor x = rand_leaf({2, 4}, 5, -2, 2), t = rand_leaf({2, 4}, 6, -2, 2);
  expect_gradcheck([](const std::vector<Tensor>& v) { return smooth_l1_loss(v[0], v[1], Reduction::Mean, 0.7); },
                   {x, t});
  expect_gradgradcheck(
      [](const std::vector<Tensor>& v) { return smooth_l1_loss(v[0], v[1], Reduction::Sum, 0.7); }, {x, t});
}

TEST(BinaryCrossEntropyTest, MatchesNaiveWithWeightsAndClampedLogs) {
  const std::vector<double> p = {0.2, 0.9, 0.0, 1.0, 0.5, 0.35};
  const std::vector<double> t = {0.0, 1.0, 1.0, 1.0, 0.3, 0.0};
  const std::vector<double> w = {0.5, 2.0, 1.5};
  std::vector<double> ref;
  for (size_t i = 0; i < p.size(); ++i) {
    double log_p = std::max(std::log(p[i]), -100.0), log_q = std::max(std::log(1 - p[i]), -100.0);
    ref.push_back(-w[i % 3] * (t[i] * log_p + (1 - t[i]) * log_q));
  }
  EXPECT_NEAR(ref[2], 100.0 * 1.5, 1e-12);  // p = 0 with t = 1 hits the clamp
  for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean})
    expect_allclose(binary_cross_entropy(f64(p, kShape), f64(t, kShape), f64(w, {3}), r),
                    reduce_reference(ref, kShape, r), 1e-12);
}

TEST(BinaryCrossEntropyTest, GradientIsFiniteAtZeroAndOne) {
  Tensor p = f64({0.0, 1.0, 0.25}, {3}).set_requires_grad();
  backward(binary_cross_entropy(p, f64({1.0, 0.0, 1.0}, {3}), {}, Reduction::Sum));
  auto g = p.grad().to_vector<double>();
  EXPECT_EQ(g[0], 0.0);
  EXPECT_EQ(g[1], 0.0);
  EXPECT_NEAR(g[2], -4.0, 1e-12);
}

TEST(BinaryCrossEntropyTest, RejectsBadInputs) {
  EXPECT_THROW(binary_cross_entropy(f64({0.5, 1.5}, {2}), f64({1, 0}, {2})), ValueError);
  EXPECT_THROW(binary_cross_entropy(f64({0.5, -0.1}, {2}), f64({1, 0}, {2})), ValueError);
  EXPECT_THROW(binary_cross_entropy(f64({0.5, 0.5}, {2}), f64({1, 0, 1}, {3})), ShapeError);
  EXPECT_THROW(binary_cross_entropy(f64({0.5, 0.5}, {2}), f64({1, 0}, {2}), f64({1, 1, 1}, {3})), ShapeError);
  EXPECT_THROW(binary_cross_entropy(f64({0.5, 0.5}, {2}), f64({1, 0}, {2}), ones({2}, DType::Int64)), TypeError);
}

TEST(BinaryCrossEntropyTest, Gradcheck) {
  Tensor p = rand_leaf({2, 3}, 7, 0.05, 0.95), t = rand_leaf({2, 3}, 8, 0.0, 1.0);
  Tensor w = rand(Shape{3}, DType::Float64, nullptr, 0.5, 2.0);
  expect_gradcheck([&](const std::vector<Tensor>& v) { return binary_cross_entropy(v[0], v[1], w); }, {p, t});
  expect_gradgradcheck([](const std::vector<Tensor>& v) { return binary_cross_entropy(v[0], v[1]); }, {p, t});
}

double naive_bce_with_logits(double x, double t, double pos_weight) {
  double log_sigmoid = -std::log1p(std::exp(-x)), log_one_minus = -std::log1p(std::exp(x));
  return -(pos_weight * t * log_sigmoid + (1 - t) * log_one_minus);
}

TEST(BinaryCrossEntropyWithLogitsTest, MatchesNaiveWithWeightAndPosWeight) {
  const std::vector<double> t = {0.0, 1.0, 1.0, 0.5, 0.3, 0.0};
  const std::vector<double> w = {1.0, 0.5, 3.0}, pw = {2.0, 1.0, 0.25};
  std::vector<double> plain, weighted;
  for (size_t i = 0; i < kInput.size(); ++i) {
    plain.push_back(naive_bce_with_logits(kInput[i], t[i], 1.0));
    weighted.push_back(w[i % 3] * naive_bce_with_logits(kInput[i], t[i], pw[i % 3]));
  }
  for (Reduction r : {Reduction::None, Reduction::Sum, Reduction::Mean}) {
    expect_allclose(binary_cross_entropy_with_logits(f64(kInput, kShape), f64(t, kShape), {}, {}, r),
                    reduce_reference(plain, kShape, r), 1e-12);
    expect_allclose(binary_cross_entropy_with_logits(f64(kInput, kShape), f64(t, kShape), f64(w, {3}), f64(pw, {3}), r),
                    reduce_reference(weighted, kShape, r), 1e-12);
  }
}

TEST(BinaryCrossEntropyWithLogitsTest, StableForLargeLogits) {
  Tensor x = from_vector(std::vector<float>{200.f, -200.f, 200.f, -200.f}, {4});
  Tensor t = from_vector(std::vector<float>{1.f, 0.f, 0.f, 1.f}, {4});
  auto loss = binary_cross_entropy_with_logits(x, t, {}, {}, Reduction::None).to_vector<float>();
  EXPECT_EQ(loss[0], 0.f);
  EXPECT_EQ(loss[1], 0.f);
  EXPECT_FLOAT_EQ(loss[2], 200.f);
  EXPECT_FLOAT_EQ(loss[3], 200.f);
}

TEST(BinaryCrossEntropyWithLogitsTest, GradientAtZeroLogitIsSigmoidMinusTarget) {
  Tensor x = zeros({2}, DType::Float64).set_requires_grad();
  backward(binary_cross_entropy_with_logits(x, f64({0.3, 1.0}, {2}), {}, {}, Reduction::Sum));
  expect_allclose(x.grad(), f64({0.2, -0.5}, {2}), 1e-12);
}

TEST(BinaryCrossEntropyWithLogitsTest, RejectsBadInputs) {
  EXPECT_THROW(binary_cross_entropy_with_logits(zeros({2, 3}), zeros({2})), ShapeError);
  EXPECT_THROW(binary_cross_entropy_with_logits(zeros({2, 3}), zeros({2, 3}), {}, zeros({2})), ShapeError);
  EXPECT_THROW(binary_cross_entropy_with_logits(zeros({2}, DType::Int32), zeros({2})), TypeError);
}

TEST(BinaryCrossEntropyWithLogitsTest, Gradcheck) {
  Tensor x = rand_leaf({2, 3}, 9, -3, 3), t = rand_leaf({2, 3}, 10, 0, 1);
  Tensor pw = rand(Shape{3}, DType::Float64, nullptr, 0.5, 2.0);
  expect_gradcheck(
      [&](const std::vector<Tensor>& v) { return binary_cross_entropy_with_logits(v[0], v[1], {}, pw); }, {x, t});
  expect_gradgradcheck(
      [&](const std::vector<Tensor>& v) { return binary_cross_entropy_with_logits(v[0], v[1], {}, pw); }, {x, t});
}

}  // namespace
}  // namespace skiff
