#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

TEST(SortTest, AscendingDescendingStable) {
  Tensor x = from_vector<float>({3, 1, 2, 1, 5, 5, 0, 5}, {2, 4});
  ValuesIndices a = sort(x);
  EXPECT_EQ(a.values.to_vector<float>(), (std::vector<float>{1, 1, 2, 3, 0, 5, 5, 5}));
  EXPECT_EQ(a.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 2, 0, 2, 0, 1, 3}));
  ValuesIndices d = sort(x, 1, /*descending=*/true);
  EXPECT_EQ(d.values.to_vector<float>(), (std::vector<float>{3, 2, 1, 1, 5, 5, 5, 0}));
  EXPECT_EQ(d.indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1, 3, 0, 1, 3, 2}));
  ValuesIndices c = sort(x, 0);
  EXPECT_EQ(c.values.to_vector<float>(), (std::vector<float>{3, 1, 0, 1, 5, 5, 2, 5}));
  EXPECT_EQ(c.indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(argsort(x, -1, true).to_vector<int64_t>(), d.indices.to_vector<int64_t>());
}

TEST(SortTest, MatchesStdSortOnNonContiguousIntegers) {
  Generator g(5);
  Tensor base = randint(-50, 50, {30, 20}, DType::Int32, &g);
  Tensor x = t(base);  // [20, 30], sort along dim 1 = columns of base
  ValuesIndices r = sort(x, 1);
  auto bv = base.to_vector<int32_t>();
  auto rv = r.values.to_vector<int32_t>();
  auto ri = r.indices.to_vector<int64_t>();
  for (int64_t col = 0; col < 20; ++col) {
    std::vector<int64_t> order(30);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return bv[size_t(a * 20 + col)] < bv[size_t(b * 20 + col)]; });
    for (int64_t k = 0; k < 30; ++k) {
      ASSERT_EQ(ri[size_t(col * 30 + k)], order[size_t(k)]);
      ASSERT_EQ(rv[size_t(col * 30 + k)], bv[size_t(order[size_t(k)] * 20 + col)]);
    }
  }
}

TEST(SortTest, NanSortsLast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ValuesIndices r = sort(from_vector<float>({2, nan, -1, 0}));
  EXPECT_EQ(r.indices.to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 0, 1}));
  EXPECT_EQ(sort(from_vector<float>({2, nan, -1}), 0, true).indices.to_vector<int64_t>(),
            (std::vector<int64_t>{1, 0, 2}));
}

TEST(SortTest, ScalarEmptyAndErrors) {
  ValuesIndices s = sort(scalar_tensor(4.0));
  EXPECT_EQ(s.values.dim(), 0);
  EXPECT_EQ(s.indices.item<int64_t>(), 0);
  EXPECT_EQ(sort(zeros({2, 0})).values.shape(), (Shape{2, 0}));
  EXPECT_THROW(sort(zeros({2, 3}), 2), IndexError);
  EXPECT_THROW(sort(zeros({2}, DType::Complex64)), TypeError);
}

TEST(SortTest, GradientScattersBack) {
  Tensor x = from_vector<double>({3, 1, 2}).set_requires_grad();
  backward(sum(mul(sort(x).values, from_vector<double>({1, 10, 100}))));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{100, 1, 10}));
  Tensor y = rand_leaf({3, 5}, 31);
  expect_gradcheck([](const std::vector<Tensor>& in) { return sort(in[0], 1, true).values; }, {y});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return square(sort(in[0], 0).values); }, {y});
}

TEST(TopkTest, LargestAndSmallest) {
  Tensor x = from_vector<float>({1, 9, 3, 9, 7, 4, 0, 2, 8, 6}, {2, 5});
  ValuesIndices r = topk(x, 3);
  EXPECT_EQ(r.values.shape(), (Shape{2, 3}));
  EXPECT_EQ(r.values.to_vector<float>(), (std::vector<float>{9, 9, 7, 8, 6, 4}));
  EXPECT_EQ(r.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 4, 3, 4, 0}));
  ValuesIndices s = topk(x, 2, 1, /*largest=*/false);
  EXPECT_EQ(s.values.to_vector<float>(), (std::vector<float>{1, 3, 0, 2}));
  EXPECT_EQ(s.indices.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1, 2}));
  ValuesIndices c = topk(x, 1, 0);
  EXPECT_EQ(c.values.to_vector<float>(), (std::vector<float>{4, 9, 3, 9, 7}));
  EXPECT_EQ(topk(x, 0).values.shape(), (Shape{2, 0}));
  EXPECT_EQ(topk(from_vector<int64_t>({5, -2, 8}), 2).values.to_vector<int64_t>(), (std::vector<int64_t>{8, 5}));
}

TEST(TopkTest, MatchesFullSortOnLargeInput) {
  Generator g(6);
  Tensor x = rand({16, 4096}, DType::Float32, &g);
  ValuesIndices r = topk(x, 10, 1);
  ValuesIndices s = sort(x, 1, true);
  EXPECT_EQ(r.values.to_vector<float>(), contiguous(slice(s.values, 1, 0, 10)).to_vector<float>());
  EXPECT_EQ(r.indices.to_vector<int64_t>(), contiguous(slice(s.indices, 1, 0, 10)).to_vector<int64_t>());
}

TEST(TopkTest, Errors) {
  EXPECT_THROW(topk(zeros({2, 3}), 4), ValueError);
  EXPECT_THROW(topk(zeros({2, 3}), -1), ValueError);
  EXPECT_THROW(topk(zeros({2, 3}), 1, 3), IndexError);
}

TEST(TopkTest, Gradcheck) {
  Tensor x = rand_leaf({3, 6}, 32);
  expect_gradcheck([](const std::vector<Tensor>& in) { return topk(in[0], 2).values; }, {x});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return square(topk(in[0], 2, 0, false).values); }, {x});
}

TEST(OneHotTest, EncodesAndInfersClasses) {
  Tensor i = from_vector<int64_t>({2, 0, 1, 2}, {2, 2});
  Tensor o = one_hot(i);
  EXPECT_EQ(o.shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(o.dtype(), DType::Int64);
  EXPECT_EQ(o.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(one_hot(from_vector<int64_t>({1}), 4).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0, 0}));
  EXPECT_EQ(one_hot(t(i), 3).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 1}));
  EXPECT_THROW(one_hot(from_vector<int64_t>({3}), 3), IndexError);
  EXPECT_THROW(one_hot(from_vector<int64_t>({-1}), 3), IndexError);
  EXPECT_THROW(one_hot(from_vector<int32_t>({1}), 3), TypeError);
}

TEST(MaskedFillTest, FillsWithBroadcastMask) {
  Tensor x = reshape(arange(0.0, 6.0, 1.0, DType::Float32), {2, 3});
  Tensor mask = from_vector<bool>({true, false, true}, {3});
  EXPECT_EQ(masked_fill(x, mask, -1.0).to_vector<float>(), (std::vector<float>{-1, 1, -1, -1, 4, -1}));
  EXPECT_EQ(masked_fill(from_vector<int64_t>({1, 2}), from_vector<bool>({false, true}), 9.0).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 9}));
  EXPECT_THROW(masked_fill(x, from_vector<float>({1, 0, 1}), 0.0), TypeError);
  EXPECT_THROW(masked_fill(zeros({3}), from_vector<bool>({true, false, true, true, false, true}, {2, 3}), 0.0),
               ShapeError);
}

TEST(MaskedFillTest, Gradcheck) {
  Tensor x = rand_leaf({2, 3}, 33);
  Tensor v = rand_leaf({}, 34);
  Tensor mask = from_vector<bool>({true, false, false, false, true, true}, {2, 3});
  expect_gradcheck([mask](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, 0.5); }, {x});
  expect_gradcheck([mask](const std::vector<Tensor>& in) { return masked_fill(in[0], mask, in[1]); }, {x, v});
}

}  // namespace
}  // namespace skiff
