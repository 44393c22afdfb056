// Layers: shapes, values against the functional ops or hand computations,
// default initialization, modes, errors and float64 gradient checks.

#include <gtest/gtest.h>

#include <cmath>

#include "framework/nn/nn.h"
#include "tests/framework/nn/nn_test_utils.h"

namespace skiff::nn {
namespace {

using testing::expect_close;
using testing::expect_module_gradcheck;
using testing::rand64;
using testing::values;

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : values(t)) m = std::max(m, std::abs(v));
  return m;
}

TEST(LinearTest, ComputesXWtPlusBAndChecksShape) {
  Generator g(1);
  Linear fc(3, 2, true, &g);
  EXPECT_EQ(fc.weight.shape(), (Shape{2, 3}));
  EXPECT_EQ(fc.bias.shape(), (Shape{2}));
  Tensor x = rand({4, 5, 3});
  Tensor y = fc(x);
  EXPECT_EQ(y.shape(), (Shape{4, 5, 2}));
  expect_close(y, matmul(x, t(fc.weight)) + fc.bias);
  EXPECT_THROW(fc(rand({4, 2})), ShapeError);
  Linear nb(3, 2, false);
  EXPECT_FALSE(nb.bias.defined());
  EXPECT_EQ(nb.parameters().size(), 1u);
  EXPECT_NE(fc.str().find("in_features=3, out_features=2"), std::string::npos);
}

TEST(LinearTest, DefaultInitMatchesPyTorchBoundsAndSeed) {
  Generator g1(7), g2(7);
  Linear a(64, 128, true, &g1), b(64, 128, true, &g2);
  EXPECT_EQ(a.weight.to_vector<float>(), b.weight.to_vector<float>());
  double bound = 1.0 / 8.0;
  EXPECT_LE(max_abs(a.weight), bound);
  EXPECT_GT(max_abs(a.weight), 0.95 * bound);
  EXPECT_LE(max_abs(a.bias), bound);
}

TEST(LinearTest, GradcheckFloat64) {
  Generator g(2);
  Linear fc(3, 2, true, &g);
  fc.to(DType::Float64);
  Tensor x = rand64({4, 3}, 3, true);
  expect_module_gradcheck([&] { return fc(x); }, {x, fc.weight, fc.bias});
}

TEST(ConvTest, Conv2dShapesInitAndGradcheck) {
  Generator g(3);
  Conv2d conv(4, 6, {3}, {2}, {1}, {1}, 2, true, &g);
  EXPECT_EQ(conv.weight.shape(), (Shape{6, 2, 3, 3}));
  EXPECT_LE(max_abs(conv.weight), 1.0 / std::sqrt(18.0));
  EXPECT_LE(max_abs(conv.bias), 1.0 / std::sqrt(18.0));
  EXPECT_EQ(conv(rand({2, 4, 9, 8})).shape(), (Shape{2, 6, 5, 4}));
  EXPECT_THROW(conv(rand({2, 3, 9, 8})), ShapeError);
  EXPECT_THROW(Conv2d(3, 6, {3}, {1}, {0}, {1}, 2), ValueError);
  EXPECT_THROW(Conv2d(4, 6, {3, 3, 3}), ValueError);

  Conv2d small(2, 2, {2, 3}, {1}, {1, 0}, {1}, 1, true, &g);
  small.to(DType::Float64);
  Tensor x = rand64({1, 2, 3, 4}, 4, true);
  expect_module_gradcheck([&] { return small(x); }, {x, small.weight, small.bias});
}

TEST(ConvTest, Conv1dMatchesConv2dWithUnitHeight) {
  Generator g(4);
  Conv1d c1(3, 5, 3, 1, 1, 1, 1, true, &g);
  Tensor x = rand({2, 3, 10});
  Tensor y = c1(x);
  EXPECT_EQ(y.shape(), (Shape{2, 5, 10}));
  Tensor y2 = conv2d(unsqueeze(x, 2), unsqueeze(c1.weight, 2), c1.bias, {1}, {0, 1});
  expect_close(y, squeeze(y2, 2));
  EXPECT_THROW(c1(rand({2, 3, 4, 4})), ShapeError);
}

TEST(ConvTest, ConvTranspose2dUpsamplesAndGradchecks) {
  Generator g(5);
  ConvTranspose2d up(4, 2, {3}, {2}, {1}, {1}, 1, true, {1}, &g);
  EXPECT_EQ(up.weight.shape(), (Shape{4, 2, 3, 3}));
  EXPECT_LE(max_abs(up.weight), 1.0 / std::sqrt(18.0));  // fan_in = weight.size(1) * 9, as PyTorch
  EXPECT_EQ(up(rand({1, 4, 5, 5})).shape(), (Shape{1, 2, 10, 10}));
  EXPECT_THROW(ConvTranspose2d(4, 2, {3}, {2}, {1}, {2}), ValueError);

  ConvTranspose2d small(2, 1, {2}, {2}, {0}, {0}, 1, true, {1}, &g);
  small.to(DType::Float64);
  Tensor x = rand64({1, 2, 2, 2}, 6, true);
  expect_module_gradcheck([&] { return small(x); }, {x, small.weight, small.bias});
}

TEST(BatchNormTest, TrainingNormalizesAndUpdatesRunningStats) {
  BatchNorm2d bn(3);
  Generator g(6);
  Tensor x = rand({8, 3, 4, 4}, DType::Float32, &g, 2.0, 6.0);
  Tensor y = bn(x);
  auto m = values(mean(y, {0, 2, 3}));
  auto s = values(var(y, {0, 2, 3}, 0));
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(m[c], 0.0, 1e-5);
    EXPECT_NEAR(s[c], 1.0, 1e-3);
  }
  expect_close(bn.running_mean, mean(x, {0, 2, 3}) * 0.1);
  expect_close(bn.running_var, var(x, {0, 2, 3}, 1) * 0.1 + 0.9);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 1);
  EXPECT_EQ(bn.state_dict().count("running_var"), 1u);
}

TEST(BatchNormTest, EvalUsesRunningStats) {
  BatchNorm1d bn(2, 1e-5, 0.1);
  detail::copy_into(bn.running_mean, from_vector<float>({1.0f, -1.0f}));
  detail::copy_into(bn.running_var, from_vector<float>({4.0f, 0.25f}));
  bn.eval();
  Tensor x = from_vector<float>({3.0f, 0.0f, 1.0f, -1.0f}, {2, 2});
  auto y = values(bn(x));
  EXPECT_NEAR(y[0], 2.0 / std::sqrt(4.0 + 1e-5), 1e-5);
  EXPECT_NEAR(y[1], 1.0 / std::sqrt(0.25 + 1e-5), 1e-5);
  EXPECT_NEAR(y[2], 0.0, 1e-6);
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 0);
  EXPECT_EQ(values(bn.running_mean), (std::vector<double>{1.0, -1.0}));
  EXPECT_EQ(bn(rand({2, 2, 5})).shape(), (Shape{2, 2, 5}));
  EXPECT_THROW(bn(rand({2, 2, 2, 2})), ShapeError);
  EXPECT_THROW(bn(rand({2, 3})), ShapeError);
}

TEST(BatchNormTest, WithoutTrackingUsesBatchStatsInEval) {
  BatchNorm1d bn(2, 1e-5, 0.1, false, false);
  EXPECT_TRUE(bn.parameters().empty());
  EXPECT_TRUE(bn.state_dict().empty());
  bn.eval();
  Tensor y = bn(rand({16, 2}));
  EXPECT_NEAR(values(mean(y, {0}))[0], 0.0, 1e-5);
}

TEST(BatchNormTest, GradcheckFloat64) {
  BatchNorm1d bn(2);
  bn.to(DType::Float64);
  Tensor x = rand64({5, 2}, 7, true);
  detail::copy_into(bn.weight, from_vector<double>({1.5, -0.5}));
  expect_module_gradcheck([&] { return bn(x); }, {x, bn.weight, bn.bias});
}

TEST(NormTest, LayerNormAndGroupNorm) {
  LayerNorm ln({4});
  Tensor x = rand({3, 4}, DType::Float32, nullptr, -3, 3);
  Tensor y = ln(x);
  for (double m : values(mean(y, {1}))) EXPECT_NEAR(m, 0.0, 1e-5);
  EXPECT_THROW(ln(rand({3, 5})), ShapeError);
  EXPECT_THROW(LayerNorm({}), ValueError);

  GroupNorm gn(2, 4);
  EXPECT_EQ(gn(rand({2, 4, 3, 3})).shape(), (Shape{2, 4, 3, 3}));
  EXPECT_THROW(GroupNorm(3, 4), ValueError);
  EXPECT_THROW(gn(rand({2, 6, 3})), ShapeError);

  LayerNorm ln64({3});
  ln64.to(DType::Float64);
  detail::copy_into(ln64.weight, from_vector<double>({1.0, 2.0, -1.0}));
  Tensor x64 = rand64({2, 3}, 8, true);
  expect_module_gradcheck([&] { return ln64(x64); }, {x64, ln64.weight, ln64.bias});
  GroupNorm gn64(2, 4);
  gn64.to(DType::Float64);
  Tensor xg = rand64({1, 4, 3}, 9, true);
  expect_module_gradcheck([&] { return gn64(xg); }, {xg, gn64.weight, gn64.bias});
}

TEST(EmbeddingTest, LooksUpRowsAndKeepsPaddingRowZero) {
  Generator g(10);
  Embedding emb(5, 3, -1, &g);  // padding_idx = 4
  EXPECT_EQ(emb.padding_idx(), 4);
  EXPECT_EQ(values(select(emb.weight, 0, 4)), std::vector<double>(3, 0.0));
  Tensor idx = from_vector<int32_t>({1, 4, 1, 0}, {2, 2});
  Tensor y = emb(idx);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  expect_close(select(select(y, 0, 0), 0, 0), select(emb.weight, 0, 1));
  backward(sum(y * 2.0));
  auto gw = values(emb.weight.grad());
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(gw[1 * 3 + j], 4.0);  // row 1 used twice
    EXPECT_EQ(gw[4 * 3 + j], 0.0);  // padding row gets no gradient
    EXPECT_EQ(gw[2 * 3 + j], 0.0);
  }
  EXPECT_THROW(emb(from_vector<int64_t>({5})), IndexError);
  EXPECT_THROW(emb(rand({2})), TypeError);
  EXPECT_THROW(Embedding(5, 3, 5), ValueError);
}

TEST(DropoutTest, TrainScalesEvalIsIdentity) {
  Generator g(11);
  Dropout d(0.25, &g);
  Tensor x = ones({1000});
  auto y = values(d(x));
  int zeros_n = 0;
  for (double v : y) {
    if (v == 0.0) ++zeros_n;
    else EXPECT_NEAR(v, 1.0 / 0.75, 1e-6);
  }
  EXPECT_GT(zeros_n, 180);
  EXPECT_LT(zeros_n, 320);
  d.eval();
  EXPECT_TRUE(d(x).is_same(x));
  EXPECT_THROW(Dropout(1.5), ValueError);
}

TEST(ShapeLayersTest, IdentityAndFlatten) {
  Tensor x = rand({2, 3, 4, 5});
  EXPECT_TRUE(Identity()(x).is_same(x));
  EXPECT_EQ(Flatten()(x).shape(), (Shape{2, 60}));
  EXPECT_EQ(Flatten(0, 1)(x).shape(), (Shape{6, 4, 5}));
}

TEST(ActivationTest, EachLayerMatchesItsFormula) {
  Tensor x = from_vector<double>({-4.0, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0});
  auto xs = values(x);
  auto check = [&](Module&& m, const std::function<double(double)>& f, double tol = 1e-6) {
    auto y = values(m(x));
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(y[i], f(xs[i]), tol) << m.type_name() << " at " << xs[i];
  };
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  check(ReLU(), [](double v) { return std::max(v, 0.0); });
  check(LeakyReLU(0.2), [](double v) { return v > 0 ? v : 0.2 * v; });
  check(GELU(), [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
  check(GELU(true), [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  });
  check(SiLU(), [&](double v) { return v * sig(v); });
  check(Sigmoid(), sig);
  check(Tanh(), [](double v) { return std::tanh(v); });
  check(Hardswish(), [](double v) { return v * std::clamp(v + 3, 0.0, 6.0) / 6; });
  check(Hardsigmoid(), [](double v) { return std::clamp(v + 3, 0.0, 6.0) / 6; });
  check(Softplus(2.0), [](double v) { return std::log1p(std::exp(2 * v)) / 2; });
  check(ReLU6(), [](double v) { return std::clamp(v, 0.0, 6.0); });
  double z = 0;
  for (double v : xs) z += std::exp(v);
  check(Softmax(0), [&](double v) { return std::exp(v) / z; });
  check(LogSoftmax(-1), [&](double v) { return v - std::log(z); });
}

TEST(ActivationTest, SoftmaxRowsSumToOne) {
  Tensor y = Softmax(1)(rand({3, 5}));
  for (double s : values(sum(y, {1}))) EXPECT_NEAR(s, 1.0, 1e-6);
}

}  // namespace
}  // namespace skiff::nn
