#include <gtest/gtest.h>

#include "framework/ops/ops.h"

namespace skiff {

Tensor iota(const Shape& s) { return reshape(arange(0.0, double(s.numel()), 1.0, DType::Float32), s); }

TEST(ViewsTest, ViewsShareStorage) {
  Tensor x = iota({2, 3, 4});
  Tensor p = permute(x, {2, 0, 1});
  Tensor s = slice(x, 2, 0, 4, 2);
  Tensor e = expand(unsqueeze(iota({3}), 0), {5, 3});
  EXPECT_EQ(p.storage(), x.storage());
  EXPECT_EQ(s.storage(), x.storage());
  EXPECT_EQ(p.shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(s.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(e.strides()[0], 0);
  EXPECT_FALSE(p.is_contiguous());
  EXPECT_EQ(contiguous(p).to_vector<float>()[1], 4.f);  // p[0,0,1] = x[0,1,0]
}

TEST(ViewsTest, SliceWithStepAndNegativeBounds) {
  Tensor x = iota({10});
  EXPECT_EQ(slice(x, 0, 1, 8, 3).to_vector<float>(), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(slice(x, 0, -3, 100).to_vector<float>(), (std::vector<float>{7, 8, 9}));
  EXPECT_EQ(slice(x, 0, 5, 2).numel(), 0);
  EXPECT_EQ(narrow(x, 0, 2, 2).to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_THROW(narrow(x, 0, 8, 5), IndexError);
  EXPECT_EQ(select(iota({3, 2}), 0, -1).to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_THROW(select(iota({3, 2}), 0, 3), IndexError);
}

TEST(ViewsTest, ReshapeInfersAndCopiesWhenNeeded) {
  Tensor x = iota({2, 6});
  EXPECT_EQ(reshape(x, {3, -1}).shape(), (Shape{3, 4}));
  EXPECT_THROW(reshape(x, {5, -1}), ShapeError);
  EXPECT_THROW(reshape(x, {-1, -1}), ShapeError);
  Tensor tt = t(x);
  Tensor r = reshape(tt, {12});
  EXPECT_EQ(r.to_vector<float>()[1], 6.f);
  EXPECT_EQ(flatten(iota({2, 3, 4}), 1).shape(), (Shape{2, 12}));
}

TEST(ViewsTest, SqueezeUnsqueezeDiagonal) {
  Tensor x = iota({1, 3, 1});
  EXPECT_EQ(squeeze(x).shape(), (Shape{3}));
  EXPECT_EQ(squeeze(x, 0).shape(), (Shape{3, 1}));
  EXPECT_EQ(unsqueeze(iota({3}), -1).shape(), (Shape{3, 1}));
  Tensor m = iota({3, 3});
  EXPECT_EQ(diagonal(m).to_vector<float>(), (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(diagonal(m, 1).to_vector<float>(), (std::vector<float>{1, 5}));
  EXPECT_EQ(diagonal(m, -1).to_vector<float>(), (std::vector<float>{3, 7}));
}

TEST(ViewsTest, PermuteRejectsBadDims) {
  EXPECT_THROW(permute(iota({2, 3}), {0, 0}), IndexError);
  EXPECT_THROW(permute(iota({2, 3}), {0}), IndexError);
  EXPECT_THROW(expand(iota({2, 3}), {4, 3}), ShapeError);
}

TEST(ViewsTest, ConcatStackSplitChunk) {
  Tensor a = iota({2, 2}), b = add(iota({2, 1}), 100.0);
  Tensor c = concat({a, b}, 1);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{0, 1, 100, 2, 3, 101}));
  EXPECT_THROW(concat({a, iota({3, 3})}, 1), ShapeError);
  EXPECT_EQ(stack({iota({2}), iota({2})}, 1).shape(), (Shape{2, 2}));
  auto parts = split(iota({5}), 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].to_vector<float>(), (std::vector<float>{4}));
  EXPECT_EQ(chunk(iota({6}), 3)[1].to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_THROW(split(iota({5}), std::vector<int64_t>{2, 2}), ShapeError);
}

}  // namespace skiff
