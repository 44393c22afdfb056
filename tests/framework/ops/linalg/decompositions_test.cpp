#include <gtest/gtest.h>

#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

// Random well-conditioned matrices: uniform noise plus n on the diagonal.
Tensor well_conditioned(const Shape& s, uint64_t seed, DType dtype = DType::Float64) {
  Generator g(seed);
  const int64_t n = s[s.size() - 1];
  return to(add(rand(s, DType::Float64, &g, -1.0, 1.0), mul(eye(n, n, DType::Float64), double(n))), dtype);
}

Tensor random(const Shape& s, uint64_t seed) {
  Generator g(seed);
  return rand(s, DType::Float64, &g, -1.0, 1.0);
}

TEST(SolveTest, HandValuesAndResidual) {
  Tensor a = from_vector<double>({2, 1, 1, 3}, {2, 2});
  Tensor b = from_vector<double>({3, 5});
  // 2x + y = 3, x + 3y = 5 -> x = 0.8, y = 1.4
  Tensor x = solve(a, b);
  EXPECT_EQ(x.shape(), (Shape{2}));
  expect_allclose(x, from_vector<double>({0.8, 1.4}), 1e-14, 1e-14);
  Tensor m = well_conditioned({3, 4, 4}, 1), rhs = random({3, 4, 2}, 2);
  Tensor sol = solve(m, rhs);
  EXPECT_EQ(sol.shape(), (Shape{3, 4, 2}));
  expect_allclose(matmul(m, sol), rhs, 1e-12, 1e-12);
  // Batch broadcasting: one A for a batch of right-hand sides, and vector rhs per batch.
  Tensor one = well_conditioned({4, 4}, 3);
  expect_allclose(matmul(one, solve(one, rhs)), rhs, 1e-12, 1e-12);
  Tensor vecs = random({3, 4}, 4);
  Tensor vx = solve(m, vecs);
  EXPECT_EQ(vx.shape(), (Shape{3, 4}));
  expect_allclose(squeeze(matmul(m, unsqueeze(vx, -1)), -1), vecs, 1e-12, 1e-12);
  // Transposed (non-contiguous) A and float32.
  Tensor tf = to(t(one), DType::Float32);
  Tensor rf = to(random({4, 3}, 5), DType::Float32);
  expect_allclose(matmul(tf, solve(tf, rf)), rf, 1e-5, 1e-4);
}

TEST(SolveTest, Errors) {
  EXPECT_THROW(solve(zeros({2, 3}, DType::Float64), zeros({2}, DType::Float64)), ShapeError);
  EXPECT_THROW(solve(eye(3, 3, DType::Float64), zeros({4}, DType::Float64)), ShapeError);
  EXPECT_THROW(solve(eye(3, 3, DType::Int64), zeros({3}, DType::Int64)), TypeError);
  Tensor singular = from_vector<double>({1, 2, 2, 4}, {2, 2});
  EXPECT_THROW(solve(singular, from_vector<double>({1, 1})), ValueError);
  Tensor nearly = from_vector<double>({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  try {
    solve(nearly, zeros({3}, DType::Float64));
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("solve"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("singular"), std::string::npos) << e.what();
  }
}

TEST(InverseTest, ValuesBatchesAndErrors) {
  Tensor a = from_vector<double>({4, 7, 2, 6}, {2, 2});
  expect_allclose(inverse(a), from_vector<double>({0.6, -0.7, -0.2, 0.4}, {2, 2}), 1e-14, 1e-14);
  Tensor m = well_conditioned({2, 3, 5, 5}, 11);
  expect_allclose(matmul(m, inverse(m)), expand(eye(5, 5, DType::Float64), {2, 3, 5, 5}), 1e-12, 1e-12);
  Tensor f = well_conditioned({6, 6}, 12, DType::Float32);
  expect_allclose(matmul(inverse(f), f), eye(6, 6), 1e-5, 1e-5);
  EXPECT_EQ(inverse(zeros({2, 0, 0}, DType::Float64)).shape(), (Shape{2, 0, 0}));
  EXPECT_THROW(inverse(zeros({3, 3}, DType::Float64)), ValueError);
  EXPECT_THROW(inverse(zeros({3, 4}, DType::Float64)), ShapeError);
  EXPECT_THROW(inverse(zeros({3}, DType::Float64)), ShapeError);
}

TEST(CholeskyTest, FactorIsLowerAndReproducesInput) {
  Tensor a = from_vector<double>({4, 2, 2, 3}, {2, 2});
  // L = [[2, 0], [1, sqrt(2)]]
  expect_allclose(cholesky(a), from_vector<double>({2, 0, 1, std::sqrt(2.0)}, {2, 2}), 1e-14, 1e-14);
  Tensor x = random({3, 4, 4}, 21);
  Tensor spd = add(matmul(x, transpose(x, 1, 2)), mul(eye(4, 4, DType::Float64), 0.5));
  Tensor l = cholesky(spd);
  expect_allclose(matmul(l, transpose(l, 1, 2)), spd, 1e-12, 1e-12);
  auto v = l.to_vector<double>();
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = i + 1; j < 4; ++j) EXPECT_EQ(v[size_t(b * 16 + i * 4 + j)], 0.0);
  EXPECT_THROW(cholesky(from_vector<double>({1, 2, 2, 1}, {2, 2})), ValueError);  // eigenvalues 3, -1
  EXPECT_THROW(cholesky(zeros({2, 3}, DType::Float64)), ShapeError);
}

TEST(DetTest, ValuesAndSingular) {
  EXPECT_DOUBLE_EQ(det(from_vector<double>({4, 7, 2, 6}, {2, 2})).item<double>(), 10.0);
  EXPECT_DOUBLE_EQ(det(from_vector<double>({0, 1, 1, 0}, {2, 2})).item<double>(), -1.0);
  EXPECT_EQ(det(from_vector<double>({1, 2, 2, 4}, {2, 2})).item<double>(), 0.0);
  Tensor d = det(stack({mul(eye(3, 3, DType::Float64), 2.0), eye(3, 3, DType::Float64)}));
  EXPECT_EQ(d.shape(), (Shape{2}));
  expect_allclose(d, from_vector<double>({8, 1}), 1e-14, 1e-14);
  EXPECT_EQ(det(zeros({0, 0}, DType::Float64)).item<double>(), 1.0);
}

TEST(InverseTest, GradcheckAndGradgradcheck) {
  Tensor a = well_conditioned({2, 3, 3}, 31).set_requires_grad();
  auto fn = [](const std::vector<Tensor>& in) { return inverse(in[0]); };
  expect_gradcheck(fn, {a});
  expect_gradgradcheck(fn, {a});
}

TEST(SolveTest, GradcheckMatrixVectorAndBroadcast) {
  Tensor a = well_conditioned({2, 3, 3}, 41).set_requires_grad();
  Tensor b = rand_leaf({2, 3, 2}, 42);
  auto fn = [](const std::vector<Tensor>& in) { return solve(in[0], in[1]); };
  expect_gradcheck(fn, {a, b});
  expect_gradgradcheck(fn, {a, b});
  Tensor one = well_conditioned({3, 3}, 43).set_requires_grad();
  expect_gradcheck(fn, {one, rand_leaf({4, 3, 1}, 44)});
  expect_gradcheck(fn, {one, rand_leaf({3}, 45)});
}

TEST(CholeskyTest, GradcheckAndGradgradcheckThroughSpdMap) {
  // cholesky reads only a symmetric input: differentiate X -> cholesky(X X^T + I).
  Tensor x = rand_leaf({2, 3, 3}, 51);
  auto fn = [](const std::vector<Tensor>& in) {
    return cholesky(add(matmul(in[0], transpose(in[0], 1, 2)), eye(3, 3, DType::Float64)));
  };
  expect_gradcheck(fn, {x});
  expect_gradgradcheck(fn, {x});
}

TEST(DetTest, Gradcheck) {
  Tensor a = well_conditioned({2, 3, 3}, 61).set_requires_grad();
  expect_gradcheck([](const std::vector<Tensor>& in) { return det(in[0]); }, {a});
}

}  // namespace
}  // namespace skiff
