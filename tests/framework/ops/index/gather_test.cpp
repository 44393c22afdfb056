#include <gtest/gtest.h>

#include "framework/autograd/engine.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

Tensor idx(const std::vector<int64_t>& v, const Shape& s) { return from_vector(v, s); }

// out[i][j] = x[index[i][j]][j] (dim 0) or x[i][index[i][j]] (dim 1), computed naively.
std::vector<float> naive_gather_2d(const Tensor& x, int64_t dim, const Tensor& index) {
  auto xv = contiguous(x).to_vector<float>();
  auto iv = index.to_vector<int64_t>();
  int64_t cols = x.shape()[1], ir = index.shape()[0], ic = index.shape()[1];
  std::vector<float> out;
  for (int64_t i = 0; i < ir; ++i)
    for (int64_t j = 0; j < ic; ++j) {
      int64_t k = iv[size_t(i * ic + j)];
      out.push_back(dim == 0 ? xv[size_t(k * cols + j)] : xv[size_t(i * cols + k)]);
    }
  return out;
}

TEST(GatherTest, MatchesNaiveLoopOnBothDims) {
  Tensor x = reshape(arange(0.0, 12.0, 1.0, DType::Float32), {3, 4});
  Tensor i0 = idx({2, 0, 1, 1, 0, 0, 2, 2}, {2, 4});
  EXPECT_EQ(gather(x, 0, i0).to_vector<float>(), naive_gather_2d(x, 0, i0));
  Tensor i1 = idx({3, 0, 1, 1, 2, 2}, {3, 2});
  EXPECT_EQ(gather(x, 1, i1).shape(), (Shape{3, 2}));
  EXPECT_EQ(gather(x, -1, i1).to_vector<float>(), naive_gather_2d(x, 1, i1));
  Tensor xt = t(x);  // non-contiguous [4, 3]
  Tensor i2 = idx({0, 2, 1, 1}, {2, 2});
  EXPECT_EQ(gather(xt, 1, i2).to_vector<float>(), naive_gather_2d(xt, 1, i2));
}

TEST(GatherTest, AnyDtypeAndEmpty) {
  Tensor xi = from_vector<int8_t>({5, 6, 7});
  EXPECT_EQ(gather(xi, 0, idx({2, 2, 0}, {3})).to_vector<int8_t>(), (std::vector<int8_t>{7, 7, 5}));
  Tensor xb = from_vector<bool>({true, false});
  EXPECT_EQ(gather(xb, 0, idx({1, 0}, {2})).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(gather(zeros({3, 2}), 0, zeros({0, 2}, DType::Int64)).shape(), (Shape{0, 2}));
}

TEST(GatherTest, Errors) {
  Tensor x = zeros({3, 4});
  try {
    gather(x, 1, idx({0, 4}, {1, 2}));
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("gather"), std::string::npos) << msg;
    EXPECT_NE(msg.find("index 4"), std::string::npos) << msg;
    EXPECT_NE(msg.find("size 4"), std::string::npos) << msg;
  }
  EXPECT_THROW(gather(x, 0, idx({-1}, {1, 1})), IndexError);
  EXPECT_THROW(gather(x, 2, idx({0}, {1, 1})), IndexError);
  EXPECT_THROW(gather(x, 0, from_vector<int32_t>({0}, {1, 1})), TypeError);
  EXPECT_THROW(gather(x, 0, idx({0}, {1})), ShapeError);
  EXPECT_THROW(gather(x, 0, zeros({1, 5}, DType::Int64)), ShapeError);
}

TEST(GatherTest, LargeParallelMatchesNaive) {
  Generator g(3);
  Tensor x = rand({64, 1000}, DType::Float32, &g);
  Tensor i = randint(0, 1000, {64, 900}, DType::Int64, &g);
  EXPECT_EQ(gather(x, 1, i).to_vector<float>(), naive_gather_2d(x, 1, i));
}

TEST(GatherTest, Gradcheck) {
  Tensor x = rand_leaf({3, 4}, 21);
  Tensor i = idx({0, 0, 3, 1, 2, 2}, {3, 2});  // repeated positions accumulate
  expect_gradcheck([i](const std::vector<Tensor>& in) { return gather(in[0], 1, i); }, {x});
  expect_gradgradcheck([i](const std::vector<Tensor>& in) { return square(gather(in[0], 1, i)); }, {x});
}

TEST(ScatterTest, WritesAndAdds) {
  Tensor x = zeros({3, 3});
  Tensor i = idx({2, 0, 1, 0, 2, 2}, {2, 3});
  Tensor src = reshape(arange(1.0, 7.0, 1.0, DType::Float32), {2, 3});
  // scatter along dim 0: out[i[r][c]][c] = src[r][c]
  EXPECT_EQ(scatter(x, 0, i, src).to_vector<float>(), (std::vector<float>{4, 2, 0, 0, 0, 3, 1, 5, 6}));
  // duplicates: scatter_add accumulates
  Tensor j = idx({1, 1, 0}, {1, 3});
  EXPECT_EQ(scatter_add(zeros({1, 2}), 1, j, from_vector<float>({1, 2, 4}, {1, 3})).to_vector<float>(),
            (std::vector<float>{4, 3}));
  // last write wins for scatter with duplicates
  EXPECT_EQ(scatter(zeros({1, 2}), 1, j, from_vector<float>({1, 2, 4}, {1, 3})).to_vector<float>(),
            (std::vector<float>{4, 2}));
  // a larger src is cut to index's shape; an int64 x works too
  Tensor xi = zeros({2, 2}, DType::Int64);
  EXPECT_EQ(scatter_add(xi, 1, idx({1, 0}, {2, 1}), from_vector<int64_t>({7, 8, 9, 10}, {2, 2})).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 7, 9, 0}));
}

TEST(ScatterTest, Errors) {
  Tensor x = zeros({2, 2});
  EXPECT_THROW(scatter(x, 0, idx({2}, {1, 1}), ones({1, 1})), IndexError);
  EXPECT_THROW(scatter_add(x, 0, idx({0, 0}, {2, 1}), ones({1, 1})), ShapeError);
  EXPECT_THROW(scatter_add(zeros({2}, DType::Bool), 0, idx({0}, {1}), ones({1}, DType::Bool)), NotImplementedError);
}

TEST(ScatterTest, Gradcheck) {
  Tensor x = rand_leaf({3, 4}, 22);
  Tensor src = rand_leaf({2, 4}, 23);
  Tensor i = idx({2, 0, 1, 1, 0, 2, 2, 0}, {2, 4});
  expect_gradcheck([i](const std::vector<Tensor>& in) { return scatter(in[0], 0, i, in[1]); }, {x, src});
  expect_gradcheck([i](const std::vector<Tensor>& in) { return scatter_add(in[0], 0, i, in[1]); }, {x, src});
  expect_gradgradcheck([i](const std::vector<Tensor>& in) { return square(scatter_add(in[0], 0, i, in[1])); },
                       {x, src});
  expect_gradgradcheck([i](const std::vector<Tensor>& in) { return square(scatter(in[0], 0, i, in[1])); }, {x, src});
}

TEST(IndexSelectTest, SelectsRowsAndColumns) {
  Tensor x = reshape(arange(0.0, 12.0, 1.0, DType::Float32), {3, 4});
  Tensor rows = index_select(x, 0, idx({2, 0, 2}, {3}));
  EXPECT_EQ(rows.shape(), (Shape{3, 4}));
  EXPECT_EQ(rows.to_vector<float>(), (std::vector<float>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(index_select(t(x), 1, idx({1}, {1})).to_vector<float>(), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(index_select(x, -1, idx({3, 0}, {2})).to_vector<float>(), (std::vector<float>{3, 0, 7, 4, 11, 8}));
  EXPECT_EQ(index_select(x, 0, zeros({0}, DType::Int64)).shape(), (Shape{0, 4}));
  EXPECT_THROW(index_select(x, 0, idx({3}, {1})), IndexError);
  EXPECT_THROW(index_select(x, 0, idx({0}, {1, 1})), ShapeError);
}

TEST(IndexAddTest, AccumulatesDuplicates) {
  Tensor x = ones({3, 2});
  Tensor src = from_vector<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(index_add(x, 0, idx({2, 0, 2}, {3}), src).to_vector<float>(), (std::vector<float>{4, 5, 1, 1, 7, 9}));
  EXPECT_THROW(index_add(x, 0, idx({0, 1}, {2}), src), ShapeError);
  EXPECT_THROW(index_add(x, 1, idx({0, 5}, {2}), src), IndexError);
}

TEST(IndexSelectTest, Gradcheck) {
  Tensor x = rand_leaf({4, 3}, 24);
  Tensor i = idx({3, 1, 3}, {3});
  expect_gradcheck([i](const std::vector<Tensor>& in) { return index_select(in[0], 0, i); }, {x});
  expect_gradgradcheck([i](const std::vector<Tensor>& in) { return square(index_select(in[0], 1, idx({2, 2}, {2}))); },
                       {x});
  Tensor src = rand_leaf({3, 3}, 25);
  expect_gradgradcheck([i](const std::vector<Tensor>& in) { return square(index_add(in[0], 0, i, in[1])); },
                       {x, src});
}

TEST(EmbeddingTest, LooksUpRowsForAnyIndexShape) {
  Tensor w = reshape(arange(0.0, 8.0, 1.0, DType::Float32), {4, 2});
  Tensor e = embedding(w, idx({3, 0, 1, 3, 2, 2}, {2, 3}));
  EXPECT_EQ(e.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{6, 7, 0, 1, 2, 3, 6, 7, 4, 5, 4, 5}));
  EXPECT_THROW(embedding(w, idx({4}, {1})), IndexError);
  EXPECT_THROW(embedding(w, idx({-1}, {1})), IndexError);
  EXPECT_THROW(embedding(reshape(w, {8}), idx({0}, {1})), ShapeError);
  EXPECT_THROW(embedding(w, idx({0}, {1}), 4), IndexError);
}

TEST(EmbeddingTest, PaddingRowGetsNoGradient) {
  Tensor w = rand_leaf({4, 2}, 26);
  Tensor i = idx({1, 0, 1, 3}, {2, 2});
  backward(sum(embedding(w, i, -3)));  // padding_idx -3 is row 1
  EXPECT_EQ(w.grad().to_vector<double>(), (std::vector<double>{1, 1, 0, 0, 0, 0, 1, 1}));
  expect_gradcheck([i](const std::vector<Tensor>& in) { return embedding(in[0], i); }, {w});
  expect_gradgradcheck([i](const std::vector<Tensor>& in) { return square(embedding(in[0], i, 0)); }, {w});
}

}  // namespace
}  // namespace skiff
