#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Naive reference over the last dim of a contiguous [rows, n] float64 tensor.
template <typename Fn>
std::vector<double> per_row(const Tensor& x, Fn fn) {
  auto v = x.to_vector<double>();
  int64_t n = x.shape().back(), rows = x.numel() / n;
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) out.push_back(fn(std::vector<double>(v.begin() + r * n, v.begin() + (r + 1) * n)));
  return out;
}

TEST(VarTest, MatchesTwoPassReference) {
  Generator g(11);
  Tensor x = rand({4, 9}, DType::Float64, &g, -3.0, 5.0);
  for (int64_t correction : {0, 1, 2}) {
    auto ref = per_row(x, [&](const std::vector<double>& r) {
      double m = 0, s = 0;
      for (double v : r) m += v;
      m /= double(r.size());
      for (double v : r) s += (v - m) * (v - m);
      return s / double(int64_t(r.size()) - correction);
    });
    expect_allclose(var(x, {1}, correction), from_vector(ref), 1e-12, 1e-12);
    std::vector<double> sd;
    for (double v : ref) sd.push_back(std::sqrt(v));
    expect_allclose(std_dev(x, {-1}, correction, true), reshape(from_vector(sd), {4, 1}), 1e-12, 1e-12);
  }
  EXPECT_NEAR(var(from_vector<float>({1, 2, 3, 4})).item<double>(), 5.0 / 3.0, 1e-6);
  EXPECT_NEAR(var(from_vector<int32_t>({1, 2, 3, 4}), {}, 0).item<double>(), 1.25, 1e-6);
}

TEST(VarTest, LargeOffsetDoesNotCancel) {
  Tensor x = add(from_vector<float>({0.f, 1.f, 2.f, 3.f}), 1e4);
  EXPECT_NEAR(var(x, {}, 0).item<double>(), 1.25, 1e-6);
}

TEST(VarTest, Errors) {
  EXPECT_THROW(var(zeros({2, 3}), {2}), IndexError);
  EXPECT_THROW(var(zeros({2}), {}, -1), ValueError);
  EXPECT_THROW(var(zeros({2}, DType::Complex64)), TypeError);
}

TEST(VarTest, Gradcheck) {
  Tensor x = rand_leaf({3, 5}, 12);
  expect_gradcheck([](const std::vector<Tensor>& in) { return var(in[0], {1}); }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return var(in[0], {}, 0); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return var(in[0], {0}, 1, true); }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return std_dev(in[0], {1}); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return std_dev(in[0], {0}); }, {x});
}

TEST(NormTest, SpecialAndGeneralP) {
  Tensor x = from_vector<double>({3, -4, 0, 1, -1, 2}, {2, 3});
  EXPECT_DOUBLE_EQ(norm(x).item<double>(), std::sqrt(31.0));
  EXPECT_EQ(norm(x, 2.0, {1}).to_vector<double>(), (std::vector<double>{5, std::sqrt(6.0)}));
  EXPECT_EQ(norm(x, 1.0, {1}).to_vector<double>(), (std::vector<double>{7, 4}));
  EXPECT_EQ(norm(x, kInf, {0}).to_vector<double>(), (std::vector<double>{3, 4, 2}));
  EXPECT_EQ(norm(x, -kInf, {1}).to_vector<double>(), (std::vector<double>{0, 1}));
  EXPECT_EQ(norm(x, 0.0, {1}, true).to_vector<double>(), (std::vector<double>{2, 3}));
  EXPECT_NEAR(norm(x, 3.0, {1}).to_vector<double>()[0], std::cbrt(27.0 + 64.0), 1e-12);
  EXPECT_NEAR(norm(x, 0.5, {1}).to_vector<double>()[1], std::pow(2.0 + std::sqrt(2.0), 2.0), 1e-12);
  EXPECT_EQ(norm(from_vector<int32_t>({3, 4})).dtype(), DType::Float32);
  EXPECT_EQ(norm(from_vector<int32_t>({3, 4})).item<float>(), 5.f);
  EXPECT_EQ(norm(zeros({0})).item<float>(), 0.f);
}

TEST(NormTest, Float32HugeValuesDoNotOverflow) {
  Tensor x = full({4}, 1e30, DType::Float32);
  EXPECT_NEAR(norm(x).item<double>() / 2e30, 1.0, 1e-6);
}

TEST(NormTest, GradientAtZeroIsZero) {
  Tensor x = zeros({3}, DType::Float64).set_requires_grad();
  backward(norm(x));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 0, 0}));
}

TEST(NormTest, Gradcheck) {
  Tensor x = rand_leaf({3, 4}, 13);
  for (double p : {2.0, 1.0, 3.0, 1.5, kInf, -kInf}) {
    SCOPED_TRACE(p);
    expect_gradcheck([p](const std::vector<Tensor>& in) { return norm(in[0], p, {1}); }, {x});
  }
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return norm(in[0], 2.0, {0}); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return norm(in[0], 3.0); }, {x});
}

TEST(LogsumexpTest, StableForLargeValues) {
  Tensor x = from_vector<float>({1000.f, 1000.f, -1000.f, 0.f, 1.f, 2.f}, {2, 3});
  auto r = logsumexp(x, {1}).to_vector<float>();
  EXPECT_NEAR(r[0], 1000.0 + std::log(2.0), 1e-3);
  EXPECT_NEAR(r[1], std::log(std::exp(0.0) + std::exp(1.0) + std::exp(2.0)), 1e-6);
  Tensor all_neg_inf = full({3}, -kInf);
  EXPECT_EQ(logsumexp(all_neg_inf, {0}).item<float>(), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(logsumexp(x, {0, 1}, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(logsumexp(to(x, DType::Float16), {1}).dtype(), DType::Float16);
}

TEST(LogsumexpTest, Gradcheck) {
  Tensor x = rand_leaf({3, 4}, 14, -3.0, 3.0);
  expect_gradcheck([](const std::vector<Tensor>& in) { return logsumexp(in[0], {1}); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return logsumexp(in[0], {0, 1}); }, {x});
}

}  // namespace
}  // namespace skiff
