#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

TEST(ProdTest, ForwardOverDims) {
  Tensor x = reshape(arange(1.0, 7.0, 1.0, DType::Float32), {2, 3});
  EXPECT_EQ(prod(x).item<float>(), 720.f);
  EXPECT_EQ(prod(x, {1}).to_vector<float>(), (std::vector<float>{6, 120}));
  EXPECT_EQ(prod(x, {0}, true).shape(), (Shape{1, 3}));
  EXPECT_EQ(prod(x, {0}, true).to_vector<float>(), (std::vector<float>{4, 10, 18}));
  EXPECT_EQ(prod(t(x), {0}).to_vector<float>(), (std::vector<float>{6, 120}));
  EXPECT_EQ(prod(zeros({2, 0}), {1}).to_vector<float>(), (std::vector<float>{1, 1}));
}

TEST(ProdTest, IntegersAccumulateInInt64) {
  Tensor x = from_vector<int32_t>({100000, 100000, 3});
  Tensor p = prod(x);
  EXPECT_EQ(p.dtype(), DType::Int64);
  EXPECT_EQ(p.item<int64_t>(), 30000000000LL);
  EXPECT_EQ(prod(from_vector<bool>({true, true, false})).item<int64_t>(), 0);
}

TEST(ProdTest, GradientWithZeros) {
  // No zero: prod / x_i. One zero: only the zero gets the product of the others. Two zeros: all 0.
  Tensor x = from_vector<double>({2, 3, 4, 2, 0, 5, 0, 7, 0}, {3, 3}).set_requires_grad();
  backward(sum(prod(x, {1})));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{12, 8, 6, 0, 10, 0, 0, 0, 0}));
}

TEST(ProdTest, Gradcheck) {
  Tensor x = rand_leaf({3, 4}, 3, 0.5, 1.5);
  expect_gradcheck([](const std::vector<Tensor>& in) { return prod(in[0], {1}); }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return prod(in[0]); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return prod(in[0], {0}, true); }, {x});
  Tensor with_zero = from_vector<double>({0.0, 0.7, -1.2, 0.4}, {2, 2}).set_requires_grad();
  expect_gradcheck([](const std::vector<Tensor>& in) { return prod(in[0], {1}); }, {with_zero});
}

TEST(CumsumTest, ForwardAlongEachDim) {
  Tensor x = reshape(arange(0.0, 6.0, 1.0, DType::Float64), {2, 3});
  EXPECT_EQ(cumsum(x, 1).to_vector<double>(), (std::vector<double>{0, 1, 3, 3, 7, 12}));
  EXPECT_EQ(cumsum(x, 0).to_vector<double>(), (std::vector<double>{0, 1, 2, 3, 5, 7}));
  EXPECT_EQ(cumsum(t(x), -1).to_vector<double>(), (std::vector<double>{0, 3, 1, 5, 2, 7}));
  EXPECT_EQ(cumsum(scalar_tensor(3.0), 0).item<float>(), 3.f);
  EXPECT_EQ(cumsum(zeros({0, 2}), 0).shape(), (Shape{0, 2}));
  EXPECT_THROW(cumsum(x, 2), IndexError);
}

TEST(CumsumTest, IntegersAndHalf) {
  Tensor xi = from_vector<int8_t>({100, 100, 100});
  EXPECT_EQ(cumsum(xi, 0).dtype(), DType::Int64);
  EXPECT_EQ(cumsum(xi, 0).to_vector<int64_t>(), (std::vector<int64_t>{100, 200, 300}));
  Tensor xh = to(full({4}, 0.5), DType::BFloat16);
  EXPECT_EQ(cumsum(xh, 0).dtype(), DType::BFloat16);
  EXPECT_EQ(to(cumsum(xh, 0), DType::Float32).to_vector<float>(), (std::vector<float>{0.5f, 1.f, 1.5f, 2.f}));
}

TEST(CumsumTest, LargeInputMatchesNaiveLoop) {
  Generator g(7);
  Tensor x = rand({3, 5000, 7}, DType::Float64, &g);
  Tensor c = cumsum(x, 1);
  auto xv = x.to_vector<double>(), cv = c.to_vector<double>();
  for (int64_t p = 0; p < 3; ++p)
    for (int64_t q = 0; q < 7; ++q) {
      double s = 0;
      for (int64_t k = 0; k < 5000; ++k) {
        size_t i = size_t((p * 5000 + k) * 7 + q);
        s += xv[i];
        ASSERT_DOUBLE_EQ(cv[i], s);
      }
    }
}

TEST(CumsumTest, GradientIsReverseCumsum) {
  Tensor x = from_vector<double>({1, 2, 3, 4}).set_requires_grad();
  backward(sum(mul(cumsum(x, 0), from_vector<double>({1, 10, 100, 1000}))));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1111, 1110, 1100, 1000}));
  Tensor y = rand_leaf({3, 4}, 4);
  expect_gradcheck([](const std::vector<Tensor>& in) { return cumsum(in[0], 0); }, {y});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return square(cumsum(in[0], 1)); }, {y});
}

}  // namespace
}  // namespace skiff
