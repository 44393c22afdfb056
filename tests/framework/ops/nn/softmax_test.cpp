#include <gtest/gtest.h>

#include <cmath>

#include "framework/ops/nn/norm.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

// Naive reference over a contiguous float64 tensor, along `dim`.
Tensor naive_softmax(const Tensor& x, int64_t dim, bool log_space) {
  Tensor xc = contiguous(to(x, DType::Float64));
  std::vector<double> v = xc.to_vector<double>(), out(v.size());
  int64_t outer = 1, inner = 1, n = x.shape()[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= x.shape()[d];
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.shape()[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t k) { return size_t((o * n + k) * inner + j); };
      double mx = -INFINITY, total = 0;
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, v[at(k)]);
      for (int64_t k = 0; k < n; ++k) total += std::exp(v[at(k)] - mx);
      for (int64_t k = 0; k < n; ++k)
        out[at(k)] = log_space ? v[at(k)] - mx - std::log(total) : std::exp(v[at(k)] - mx) / total;
    }
  return from_vector(out, x.shape());
}

TEST(SoftmaxTest, MatchesNaiveReferenceOnEveryDim) {
  Generator g(3);
  Tensor x = randn({3, 4, 5}, DType::Float32, &g, 0.0, 3.0);
  for (int64_t dim : {0, 1, 2, -1}) {
    int64_t d = dim < 0 ? dim + 3 : dim;
    expect_allclose(softmax(x, dim), naive_softmax(x, d, false), 1e-6, 1e-5);
    expect_allclose(log_softmax(x, dim), naive_softmax(x, d, true), 1e-5, 1e-5);
  }
}

TEST(SoftmaxTest, HandComputedValues) {
  Tensor x = from_vector<double>({0.0, std::log(3.0)}, {1, 2});
  expect_allclose(softmax(x, 1), from_vector<double>({0.25, 0.75}, {1, 2}), 1e-15, 0);
  expect_allclose(log_softmax(x, 1), from_vector<double>({std::log(0.25), std::log(0.75)}, {1, 2}), 1e-15, 0);
}

TEST(SoftmaxTest, LargeLogitsDoNotOverflow) {
  Tensor x = from_vector<float>({1000.f, 1000.f, 999.f, -1000.f}, {4});
  std::vector<float> y = softmax(x, 0).to_vector<float>();
  double e = std::exp(-1.0), z = 2 + e;
  EXPECT_NEAR(y[0], 1 / z, 1e-6);
  EXPECT_NEAR(y[2], e / z, 1e-6);
  EXPECT_EQ(y[3], 0.f);
  std::vector<float> ly = log_softmax(x, 0).to_vector<float>();
  EXPECT_NEAR(ly[0], -std::log(z), 1e-5);
  EXPECT_NEAR(ly[3], -2000.0 - std::log(z), 1e-2);  // finite where softmax underflows
  for (float v : ly) EXPECT_TRUE(std::isfinite(v));
}

TEST(SoftmaxTest, NonContiguousAndWideInnerDims) {
  Generator g(5);
  // inner > kLineBlock exercises the blocked path's tail.
  Tensor x = randn({2, 7, 70}, DType::Float64, &g);
  expect_allclose(softmax(x, 1), naive_softmax(x, 1, false), 1e-14, 1e-12);
  Tensor xt = transpose(x, 1, 2);  // [2, 70, 7] strided view
  expect_allclose(softmax(xt, 2), naive_softmax(contiguous(xt), 2, false), 1e-14, 1e-12);
  expect_allclose(log_softmax(xt, 1), naive_softmax(contiguous(xt), 1, true), 1e-13, 1e-12);
}

TEST(SoftmaxTest, RowsSumToOneInEveryFloatType) {
  Generator g(7);
  Tensor x = randn({8, 33}, DType::Float32, &g);
  for (DType t : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    Tensor y = softmax(to(x, t), 1);
    EXPECT_EQ(y.dtype(), t);
    double tol = t == DType::BFloat16 ? 2e-2 : t == DType::Float16 ? 3e-3 : 1e-5;
    expect_allclose(sum(to(y, DType::Float64), {1}), ones({8}, DType::Float64), tol, 0);
    expect_allclose(to(y, DType::Float64), naive_softmax(x, 1, false), tol, tol);
  }
}

TEST(SoftmaxTest, ZeroDimAndEmptyInputs) {
  EXPECT_DOUBLE_EQ(softmax(scalar_tensor(5.0, DType::Float64), 0).item<double>(), 1.0);
  EXPECT_DOUBLE_EQ(log_softmax(scalar_tensor(5.0, DType::Float64), -1).item<double>(), 0.0);
  Tensor e = zeros({0, 3});
  EXPECT_EQ(softmax(e, 1).shape(), (Shape{0, 3}));
  EXPECT_EQ(log_softmax(zeros({2, 0}), 1).shape(), (Shape{2, 0}));
}

TEST(SoftmaxTest, RejectsBadDimAndIntegerInput) {
  Tensor x = zeros({2, 3});
  EXPECT_THROW(softmax(x, 2), IndexError);
  EXPECT_THROW(log_softmax(x, -3), IndexError);
  EXPECT_THROW(softmax(arange(4), 0), TypeError);
}

TEST(SoftmaxTest, Gradcheck) {
  Tensor x = rand_leaf({3, 4, 2}, 11, -2, 2);
  for (int64_t dim : {0, 1, 2}) {
    expect_gradcheck([dim](const std::vector<Tensor>& in) { return softmax(in[0], dim); }, {x});
    expect_gradcheck([dim](const std::vector<Tensor>& in) { return log_softmax(in[0], dim); }, {x});
  }
}

TEST(SoftmaxTest, Gradgradcheck) {
  Tensor x = rand_leaf({3, 5}, 12, -2, 2);
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return softmax(in[0], 1); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return log_softmax(in[0], 0); }, {x});
}

}  // namespace
}  // namespace skiff
