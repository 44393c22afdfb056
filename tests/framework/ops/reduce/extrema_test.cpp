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

TEST(AmaxTest, ReducesAnyDimsWithKeepdim) {
  // x[i][j][k] = (i*12 + j*4 + k) * (-1)^k
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[size_t(i)] = float(i) * (i % 2 ? -1.f : 1.f);
  Tensor x = from_vector(v, {2, 3, 4});
  EXPECT_EQ(amax(x).item<float>(), 22.f);
  EXPECT_EQ(amin(x).item<float>(), -23.f);
  Tensor m = amax(x, {0, 2}, true);
  EXPECT_EQ(m.shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{14, 18, 22}));
  EXPECT_EQ(amin(x, {-1}).to_vector<float>(), (std::vector<float>{-3, -7, -11, -15, -19, -23}));
}

TEST(AmaxTest, WorksOnIntegersBoolAndHalf) {
  Tensor xi = from_vector<int32_t>({3, -7, 5, 2}, {2, 2});
  EXPECT_EQ(amax(xi, {1}).dtype(), DType::Int32);
  EXPECT_EQ(amax(xi, {1}).to_vector<int32_t>(), (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(amin(xi).item<int32_t>(), -7);
  Tensor xb = from_vector<bool>({false, true, false, false}, {2, 2});
  EXPECT_EQ(amax(xb, {1}).to_vector<bool>(), (std::vector<bool>{true, false}));
  Tensor xh = to(from_vector<float>({1.5f, -2.f, 8.f}), DType::Float16);
  EXPECT_EQ(amax(xh).dtype(), DType::Float16);
  EXPECT_EQ(amax(xh).item<float>(), 8.f);
}

TEST(AmaxTest, PropagatesNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = from_vector<float>({1.f, nan, 3.f, 0.f, 1.f, 2.f}, {2, 3});
  auto r = amax(x, {1}).to_vector<float>();
  EXPECT_TRUE(std::isnan(r[0]));
  EXPECT_EQ(r[1], 2.f);
}

TEST(AmaxTest, RejectsEmptyDimAndBadDim) {
  EXPECT_THROW(amax(zeros({2, 0})), ValueError);
  EXPECT_THROW(amax(zeros({2, 0}), {1}), ValueError);
  EXPECT_EQ(amax(zeros({2, 0}), {0}).shape(), (Shape{0}));
  EXPECT_THROW(amin(zeros({2, 3}), {2}), IndexError);
}

TEST(AmaxTest, GradientIsSharedAmongTies) {
  Tensor x = from_vector<double>({1, 3, 3, 2, 0, -1}, {2, 3}).set_requires_grad();
  backward(sum(amax(x, {1})));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 0.5, 0.5, 1, 0, 0}));
  Tensor y = from_vector<double>({4, 4, 4, 4}).set_requires_grad();
  backward(amin(y));
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
}

TEST(AmaxTest, Gradcheck) {
  Tensor x = rand_leaf({3, 4, 2}, 1);
  expect_gradcheck([](const std::vector<Tensor>& in) { return amax(in[0], {0, 2}); }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return amin(in[0], {1}, true); }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return mul(amax(in[0], {1}), amin(in[0], {1})); }, {x});
}

TEST(MaxDimTest, ValuesAndFirstIndices) {
  Tensor x = from_vector<float>({1, 5, 5, 2,   //
                                 7, 0, 7, -1,  //
                                 3, 3, 3, 3},
                                {3, 4});
  ValuesIndices r = max(x, 1);
  EXPECT_EQ(r.values.to_vector<float>(), (std::vector<float>{5, 7, 3}));
  EXPECT_EQ(r.indices.dtype(), DType::Int64);
  EXPECT_EQ(r.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  ValuesIndices m = min(x, 0, true);
  EXPECT_EQ(m.values.shape(), (Shape{1, 4}));
  EXPECT_EQ(m.values.to_vector<float>(), (std::vector<float>{1, 0, 3, -1}));
  EXPECT_EQ(m.indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 1}));
  EXPECT_EQ(argmax(x, -1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(argmin(x, 1, true).shape(), (Shape{3, 1}));
  EXPECT_EQ(argmin(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 0}));
}

TEST(MaxDimTest, NonContiguousIntegerInput) {
  Tensor x = t(reshape(from_vector<int64_t>({4, 9, 2, 8, 1, 9}), {2, 3}));  // [[4,8],[9,1],[2,9]]
  EXPECT_EQ(argmax(x, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(max(x, 1).values.to_vector<int64_t>(), (std::vector<int64_t>{8, 9, 9}));
  EXPECT_EQ(min(x, 1).indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
}

TEST(MaxDimTest, NanWinsWithItsPosition) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = from_vector<double>({1, 2, nan, 4});
  EXPECT_EQ(argmax(x, 0).item<int64_t>(), 2);
  EXPECT_EQ(argmin(x, 0).item<int64_t>(), 2);
}

TEST(MaxDimTest, Errors) {
  EXPECT_THROW(max(zeros({3, 0}), 1), ValueError);
  EXPECT_THROW(argmax(zeros({3}), 1), IndexError);
  EXPECT_THROW(max(zeros({2}, DType::Complex64), 0), TypeError);
}

TEST(MaxDimTest, GradientGoesToTheIndex) {
  Tensor x = from_vector<double>({1, 3, 3, 2, 0, -1}, {2, 3}).set_requires_grad();
  backward(sum(mul(max(x, 1).values, from_vector<double>({10, 20}))));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 10, 0, 20, 0, 0}));
}

TEST(MaxDimTest, Gradcheck) {
  Tensor x = rand_leaf({3, 5, 2}, 2);
  expect_gradcheck([](const std::vector<Tensor>& in) { return max(in[0], 1).values; }, {x});
  expect_gradcheck([](const std::vector<Tensor>& in) { return min(in[0], 0, true).values; }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return square(max(in[0], 2).values); }, {x});
}

}  // namespace
}  // namespace skiff
