#include <gtest/gtest.h>

#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/core/rng.h"
#include "framework/core/error.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/op_test_utils.h"
#include "tests/framework/scoped_threads.h"

namespace skiff {

TEST(ElementwiseTest, BroadcastAddAndPromotion) {
  Tensor a = from_vector<int32_t>({1, 2, 3}, {3, 1});
  Tensor b = from_vector<float>({10, 20}, {2});
  Tensor c = add(a, b);
  EXPECT_EQ(c.shape(), (Shape{3, 2}));
  EXPECT_EQ(c.dtype(), DType::Float32);
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{11, 21, 12, 22, 13, 23}));
}

TEST(ElementwiseTest, ScalarDoesNotWidenFloatTensor) {
  Tensor x = ones({2}, DType::Float32);
  EXPECT_EQ((x * 2.5).dtype(), DType::Float32);
  EXPECT_EQ((arange(3) * 2.0).dtype(), DType::Int64);
  EXPECT_EQ((arange(3) * 2.5).dtype(), DType::Float32);
  EXPECT_EQ(div(arange(3), 2.0).dtype(), DType::Float32);
}

TEST(ElementwiseTest, ArithmeticOnStridedViews) {
  Tensor m = reshape(arange(0.0, 6.0, 1.0, DType::Float64), {2, 3});
  Tensor mt = t(m);  // non-contiguous [3, 2]
  Tensor r = mul(mt, mt);
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{0, 9, 1, 16, 4, 25}));
}

TEST(ElementwiseTest, UnaryMathMatchesCmath) {
  std::vector<double> xs{-2.0, -0.5, 0.0, 0.3, 1.7};
  Tensor x = from_vector(xs);
  struct Case { Tensor (*f)(const Tensor&); double (*ref)(double); };
  auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  (void)sig;
  auto check = [&](Tensor y, auto ref) {
    auto v = y.to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(v[i], ref(xs[i]), 1e-12) << i;
  };
  check(exp(x), [](double v) { return std::exp(v); });
  check(sin(x), [](double v) { return std::sin(v); });
  check(tanh(x), [](double v) { return std::tanh(v); });
  check(erf(x), [](double v) { return std::erf(v); });
  check(sigmoid(x), [](double v) { return 1 / (1 + std::exp(-v)); });
  check(relu(x), [](double v) { return v > 0 ? v : 0; });
  check(leaky_relu(x, 0.1), [](double v) { return v > 0 ? v : 0.1 * v; });
  check(gelu(x), [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); });
  check(gelu(x, true), [](double v) {
    return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
  });
  check(silu(x), [](double v) { return v / (1 + std::exp(-v)); });
  check(hardswish(x), [](double v) { return v * std::min(std::max(v + 3, 0.0), 6.0) / 6; });
  check(hardsigmoid(x), [](double v) { return std::min(std::max(v / 6 + 0.5, 0.0), 1.0); });
  check(softplus(x), [](double v) { return std::log1p(std::exp(v)); });
  check(clamp(x, -1, 1), [](double v) { return std::min(std::max(v, -1.0), 1.0); });
  check(abs(x), [](double v) { return std::abs(v); });
}

TEST(ElementwiseTest, Float16ComputesInFloat) {
  Tensor h = to(from_vector<float>({0.5f, 1.0f, 2.0f}), DType::Float16);
  Tensor y = exp(h);
  EXPECT_EQ(y.dtype(), DType::Float16);
  auto v = to(y, DType::Float32).to_vector<float>();
  EXPECT_NEAR(v[2], std::exp(2.0f), 1e-2);
}

TEST(ElementwiseTest, ComparisonsAndLogicalOpsReturnBool) {
  Tensor a = from_vector<float>({1, 2, 3});
  Tensor m = gt(a, 1.5);
  EXPECT_EQ(m.dtype(), DType::Bool);
  EXPECT_EQ(m.to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(logical_not(m).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(logical_and(m, lt(a, 2.5)).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(where(m, a, 0.0).to_vector<float>(), (std::vector<float>{0, 2, 3}));
  EXPECT_THROW(where(a, a, a), TypeError);
}

TEST(ElementwiseTest, MaximumPropagatesNaN) {
  Tensor a = from_vector<float>({1, NAN});
  Tensor b = from_vector<float>({2, 0});
  auto v = maximum(a, b).to_vector<float>();
  EXPECT_EQ(v[0], 2);
  EXPECT_TRUE(std::isnan(v[1]));
}

TEST(ElementwiseTest, IntegerOps) {
  Tensor a = from_vector<int64_t>({7, -8, 9});
  EXPECT_EQ(pow(a, from_vector<int64_t>({2, 3, 0})).to_vector<int64_t>(), (std::vector<int64_t>{49, -512, 1}));
  EXPECT_EQ(neg(a).to_vector<int64_t>(), (std::vector<int64_t>{-7, 8, -9}));
  EXPECT_EQ(clamp(a, -1, 8).to_vector<int64_t>(), (std::vector<int64_t>{7, -1, 8}));
}

TEST(ElementwiseTest, IntegerClampBoundsSaturateToTheType) {
  // double(INT64_MAX) is 2^63, outside int64: such a bound clamps nothing (found by tests/fuzz/onnx).
  const int64_t big = std::numeric_limits<int64_t>::max();
  Tensor a = from_vector<int64_t>({big, -big - 1, 0});
  EXPECT_EQ(clamp(a, -9.3e18, 9.3e18).to_vector<int64_t>(), (std::vector<int64_t>{big, -big - 1, 0}));
  // A lower bound above the type's range lifts everything to its maximum; NaN bounds clamp nothing.
  Tensor b = from_vector<int32_t>({1, -5});
  EXPECT_EQ(clamp(b, 3e9, 4e9).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MAX, INT32_MAX}));
  EXPECT_EQ(clamp(b, std::nan(""), 0).to_vector<int32_t>(), (std::vector<int32_t>{0, -5}));
}

TEST(ElementwiseTest, InPlaceWritesIntoTarget) {
  Tensor a = ones({2, 2});
  Tensor alias = a;
  add_(a, from_vector<float>({1, 2}));
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{2, 3, 2, 3}));
  mul_(a, 2.0);
  relu_(a);
  EXPECT_EQ(a.to_vector<float>(), (std::vector<float>{4, 6, 4, 6}));
  Tensor w = ones({2}).set_requires_grad();
  EXPECT_THROW(add_(w, 1.0), ValueError);
  Tensor small = ones({2});
  EXPECT_THROW(add_(small, ones({2, 2})), ShapeError);
}

TEST(ElementwiseTest, ShapeMismatchNamesOpAndShapes) {
  try {
    add(ones({2, 3}), ones({4}));
    FAIL();
  } catch (const ShapeError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("[4]"), std::string::npos) << m;
  }
}

// Large element-wise expressions run on 1, 2 and 3 threads (the parallel loops of
// for_each_strided split the work differently each time) and must give the same bits,
// each within float rounding of a double reference. Both loop shapes are covered: one
// long contiguous run (split into chunks) and many short strided/broadcast runs (split
// by outer index). The thread count is checked to have taken effect, then restored.
TEST(ElementwiseTest, LargeTensorsUseSameResultsAcrossThreads) {
  Generator gen(21);
  Tensor x = randn({300007}, DType::Float32, &gen);   // odd length: chunks end inside vector tails
  Tensor m = randn({517, 601}, DType::Float32, &gen);  // transposed below: strided runs
  Tensor row = randn({517}, DType::Float32, &gen);     // broadcast along rows
  auto compute = [&] {
    Tensor a = tanh(x) * x + 1.0;
    Tensor b = exp(mul(t(m), 0.5)) - row;  // [601, 517]
    return std::make_pair(a.to_vector<float>(), contiguous(b).to_vector<float>());
  };
  const int before = num_threads();
  std::vector<std::pair<std::vector<float>, std::vector<float>>> results;
  for (int n : {1, 2, 3}) {
    testutil::ScopedNumThreads threads(n);
    ASSERT_EQ(num_threads(), n);
    if (testutil::mixed_openmp_runtimes()) GTEST_SKIP() << "two OpenMP runtimes in this process (clang build)";
    ASSERT_EQ(testutil::parallel_team_size(), n) << "set_num_threads(" << n << ") did not reach OpenMP";
    results.push_back(compute());
  }
  EXPECT_EQ(num_threads(), before) << "the thread count was not restored";
  auto xv = x.to_vector<float>(), mv = m.to_vector<float>(), rv = row.to_vector<float>();
  const auto& [a1, b1] = results[0];
  for (size_t i = 0; i < a1.size(); ++i) {
    double ref = std::tanh(double(xv[i])) * xv[i] + 1;
    ASSERT_NEAR(a1[i], ref, 1e-6 * (1 + std::abs(ref))) << "i=" << i;
  }
  for (int64_t i = 0; i < 601; ++i)
    for (int64_t j = 0; j < 517; ++j) {
      double ref = std::exp(0.5 * mv[size_t(j * 601 + i)]) - rv[size_t(j)];
      ASSERT_NEAR(b1[size_t(i * 517 + j)], ref, 1e-6 * (1 + std::abs(ref))) << i << "," << j;
    }
  for (size_t r = 1; r < results.size(); ++r) {
    const int n = int(r) + 1;
    const auto& [an, bn] = results[r];
    for (size_t i = 0; i < a1.size(); ++i) ASSERT_EQ(an[i], a1[i]) << n << " threads vs 1, contiguous, i=" << i;
    for (size_t i = 0; i < b1.size(); ++i) ASSERT_EQ(bn[i], b1[i]) << n << " threads vs 1, strided, i=" << i;
  }
}

// relu's backward is the fused relu_backward op: grad where the output is
// positive, zero elsewhere (also at 0), for float32 (vector kernel, contiguous
// and strided) and float64; its own gradient is itself, so double backward works.
TEST(ElementwiseTest, ReluBackwardPassesGradWhereOutputIsPositive) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = from_vector(std::vector<double>{-2, -0.5, 0, 0.25, 3, -1, 4, 0}, Shape{2, 4});
    x = to(x, dt).set_requires_grad();
    Tensor g = to(from_vector(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}, Shape{2, 4}), dt);
    Tensor y = relu(x);
    Tensor gx = autograd::grad({y}, {x}, {g}, /*create_graph=*/true)[0];
    EXPECT_EQ(to(gx, DType::Float64).to_vector<double>(), (std::vector<double>{0, 0, 0, 4, 5, 0, 7, 0}));
    // d/dg of sum(relu_backward(g, y) * v) is relu_backward(v, y).
    Tensor gs = g.set_requires_grad();
    Tensor h = sum(mul(relu_backward(gs, detach(y)), 2.0));
    EXPECT_EQ(to(autograd::grad({h}, {gs})[0], DType::Float64).to_vector<double>(),
              (std::vector<double>{0, 0, 0, 2, 2, 0, 2, 0}));
    // A strided (transposed) gradient takes the scalar path.
    Tensor gt_ = transpose(to(from_vector(std::vector<double>{1, 5, 2, 6, 3, 7, 4, 8}, Shape{4, 2}), dt), 0, 1);
    EXPECT_EQ(to(relu_backward(gt_, detach(y)), DType::Float64).to_vector<double>(),
              (std::vector<double>{0, 0, 0, 4, 5, 0, 7, 0}));
  }
  EXPECT_THROW(relu_backward(zeros({3}), zeros({4})), ShapeError);
  EXPECT_THROW(relu_backward(zeros({3}), zeros({3}, DType::Float64)), TypeError);
}

}  // namespace skiff

namespace skiff {
// hardswish is one op with a fused backward: its gradient is 0 below -3,
// (2x + 3) / 6 on [-3, 3] and 1 above; first and second derivatives match
// finite differences away from the kinks.
TEST(ElementwiseTest, HardswishGradientIsPiecewise) {
  Tensor x = from_vector(std::vector<double>{-5, -3.5, -2, -0.5, 0, 1.5, 2.5, 4}, Shape{8}).set_requires_grad();
  Tensor gx = autograd::grad({sum(hardswish(x))}, {x})[0];
  std::vector<double> want;
  for (double v : {-5.0, -3.5, -2.0, -0.5, 0.0, 1.5, 2.5, 4.0}) want.push_back(v < -3 ? 0 : v > 3 ? 1 : (2 * v + 3) / 6);
  std::vector<double> got = gx.to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "x = " << x.to_vector<double>()[i];
  using namespace skiff::testing;
  Tensor leaf = rand_leaf({3, 5}, 11, -2.9, 2.9);
  expect_gradcheck([](const std::vector<Tensor>& in) { return hardswish(in[0]); }, {leaf});
  expect_gradgradcheck([](const std::vector<Tensor>& in) { return hardswish(in[0]); }, {leaf});
  Tensor outside = rand_leaf({4}, 12, 3.5, 6.0);
  expect_gradcheck([](const std::vector<Tensor>& in) { return hardswish(neg(in[0])); }, {outside});
}
}  // namespace skiff
