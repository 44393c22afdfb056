// max_pool2d, avg_pool2d, adaptive_avg_pool2d: hand-computed values, naive loops written here,
// gradient routing, errors and float64 gradient checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/autograd/engine.h"
#include "framework/ops/nn/conv.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

Tensor rand_t(const Shape& s, uint64_t seed, DType dtype = DType::Float64) {
  Generator g(seed);
  return rand(s, dtype, &g, -1.0, 1.0);
}

struct PoolCase {
  Shape x;
  int64_t kh, kw, sh, sw, ph, pw, dh, dw;
  bool ceil_mode;
};

int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  double span = double(in + 2 * p - d * (k - 1) - 1) / double(s);
  int64_t out = int64_t(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

// avg: divisor follows PyTorch (window clipped to the padded input, or to the input itself).
Tensor naive_pool(const Tensor& x, const PoolCase& c, bool is_max, bool count_include_pad = true) {
  auto xv = x.to_vector<double>();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = out_len(H, c.kh, c.sh, c.ph, c.dh, c.ceil_mode);
  const int64_t OW = out_len(W, c.kw, c.sw, c.pw, c.dw, c.ceil_mode);
  std::vector<double> y;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t i = 0; i < OH; ++i)
      for (int64_t j = 0; j < OW; ++j) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t count = 0;
        for (int64_t ki = 0; ki < c.kh; ++ki)
          for (int64_t kj = 0; kj < c.kw; ++kj) {
            int64_t iy = i * c.sh - c.ph + ki * c.dh, ix = j * c.sw - c.pw + kj * c.dw;
            bool inside_padded = iy < H + c.ph && ix < W + c.pw;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
              if (inside_padded && count_include_pad) ++count;
              continue;
            }
            double v = xv[size_t((nc * H + iy) * W + ix)];
            best = std::max(best, v);
            sum += v;
            ++count;
          }
        y.push_back(is_max ? best : sum / double(count));
      }
  return from_vector(y, {N, C, OH, OW});
}

TEST(MaxPool2dTest, HandComputedValuesAndIndices) {
  Tensor x = from_vector<float>({1, 5, 2, 0,  //
                                 3, 4, 8, 1,  //
                                 0, 9, 6, 7,  //
                                 2, 1, 3, 3},
                                {1, 1, 4, 4});
  auto r = max_pool2d_with_indices(x, {2});
  EXPECT_EQ(r.values.to_vector<float>(), (std::vector<float>{5, 8, 9, 7}));
  EXPECT_EQ(r.indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 6, 9, 11}));
  EXPECT_EQ(r.indices.dtype(), DType::Int64);
  // ceil_mode keeps a partial last window: 3x3 windows with stride 2 over 4 -> 2 outputs.
  Tensor yc = max_pool2d(x, {3}, {2}, {0}, {1}, true);
  EXPECT_EQ(yc.to_vector<float>(), (std::vector<float>{9, 8, 9, 7}));
  EXPECT_EQ(max_pool2d(x, {3}, {2}).shape(), (Shape{1, 1, 1, 1}));
}

TEST(MaxPool2dTest, MatchesNaiveLoops) {
  std::vector<PoolCase> cases = {
      {{2, 3, 7, 6}, 3, 3, 2, 2, 1, 1, 1, 1, false}, {{1, 2, 9, 8}, 3, 2, 2, 3, 1, 1, 2, 1, true},
      {{2, 2, 5, 7}, 2, 3, 1, 2, 0, 1, 1, 2, false}, {{1, 1, 6, 6}, 3, 3, 2, 2, 1, 1, 1, 1, true}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const PoolCase& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i));
    Tensor x = rand_t(c.x, 1 + i);
    Tensor y = max_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, c.ceil_mode);
    expect_allclose(y, naive_pool(x, c, true), 0, 0);
    Tensor y32 = max_pool2d(to(x, DType::Float32), {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, c.ceil_mode);
    expect_allclose(y32, naive_pool(x, c, true), 1e-7, 1e-6);
  }
}

TEST(MaxPool2dTest, GradientGoesToArgmax) {
  Tensor x = from_vector<double>({1, 5, 2, 0, 3, 4, 8, 1, 0, 9, 6, 7, 2, 1, 3, 3}, {1, 1, 4, 4}).set_requires_grad();
  Tensor y = max_pool2d(x, {2});
  backward(sum(mul(y, from_vector<double>({1, 2, 3, 4}, {1, 1, 2, 2}))));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 1, 0, 0, 0, 0, 2, 0, 0, 3, 0, 4, 0, 0, 0, 0}));
  // Overlapping windows with one shared max: both gradients reach it.
  Tensor z = from_vector<double>({0, 0, 0, 0, 9, 0, 0, 0, 0}, {1, 1, 3, 3}).set_requires_grad();
  backward(sum(max_pool2d(z, {2}, {1})));
  EXPECT_EQ(z.grad().to_vector<double>(), (std::vector<double>{0, 0, 0, 0, 4, 0, 0, 0, 0}));
}

// For a linear pool the gradient does not depend on x, so double backward is checked as the
// gradient of the backward op w.r.t. the incoming gradient v.
template <typename Pool>
void expect_backward_is_differentiable(Pool pool, const Shape& x_shape, uint64_t seed) {
  Tensor x = rand_leaf(x_shape, seed);
  Tensor v = rand_leaf(pool(x).shape(), seed + 1);
  expect_gradcheck([&](const std::vector<Tensor>& in) {
    return autograd::grad({pool(x)}, {x}, {in[0]}, /*create_graph=*/true)[0];
  }, {v});
}

TEST(MaxPool2dTest, Gradcheck) {
  Tensor x = rand_leaf({2, 2, 5, 6}, 11);
  auto fn = [](const std::vector<Tensor>& in) { return max_pool2d(in[0], {3, 2}, {2, 1}, {1, 1}, {1, 2}, true); };
  expect_gradcheck(fn, {x});
  expect_gradgradcheck(fn, {x});
  expect_backward_is_differentiable([](const Tensor& t) { return max_pool2d(t, {3, 2}, {2, 1}, {1, 1}, {1, 2}, true); },
                                    {2, 2, 5, 6}, 12);
}

TEST(AvgPool2dTest, HandComputedPaddingDivisors) {
  Tensor x = reshape(arange(1.0, 10.0, 1.0, DType::Float64), {1, 1, 3, 3});
  // 2x2 windows, stride 2, padding 1: top-left window holds only x[0,0] = 1.
  Tensor with_pad = avg_pool2d(x, {2}, {2}, {1}, false, true);
  EXPECT_EQ(with_pad.to_vector<double>(), (std::vector<double>{0.25, 5.0 / 4, 11.0 / 4, 28.0 / 4}));
  Tensor without_pad = avg_pool2d(x, {2}, {2}, {1}, false, false);
  EXPECT_EQ(without_pad.to_vector<double>(), (std::vector<double>{1, 2.5, 5.5, 7}));
}

TEST(AvgPool2dTest, MatchesNaiveLoops) {
  std::vector<PoolCase> cases = {{{2, 3, 7, 6}, 3, 3, 2, 2, 1, 1, 1, 1, false},
                                 {{1, 2, 9, 8}, 3, 2, 2, 3, 1, 1, 1, 1, true},
                                 {{2, 2, 5, 7}, 2, 3, 1, 2, 0, 1, 1, 1, true}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const PoolCase& c = cases[i];
    Tensor x = rand_t(c.x, 20 + i);
    for (bool include_pad : {true, false}) {
      SCOPED_TRACE("case " + std::to_string(i) + (include_pad ? " include_pad" : " exclude_pad"));
      Tensor y = avg_pool2d(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw}, c.ceil_mode, include_pad);
      expect_allclose(y, naive_pool(x, c, false, include_pad), 1e-12, 1e-12);
    }
  }
}

TEST(AvgPool2dTest, Gradcheck) {
  Tensor x = rand_leaf({2, 2, 5, 6}, 30);
  for (bool include_pad : {true, false}) {
    auto pool = [include_pad](const Tensor& t) { return avg_pool2d(t, {3, 2}, {2, 1}, {1, 1}, true, include_pad); };
    expect_gradcheck([&](const std::vector<Tensor>& in) { return pool(in[0]); }, {x});
    expect_backward_is_differentiable(pool, {2, 2, 5, 6}, 31);
  }
}

TEST(AdaptiveAvgPool2dTest, MatchesNaiveLoops) {
  Tensor x = rand_t({2, 3, 5, 7}, 40);
  Tensor y = adaptive_avg_pool2d(x, {3, 2});
  auto xv = x.to_vector<double>();
  std::vector<double> ref;
  for (int64_t nc = 0; nc < 6; ++nc)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        int64_t y0 = i * 5 / 3, y1 = ((i + 1) * 5 + 2) / 3, x0 = j * 7 / 2, x1 = ((j + 1) * 7 + 1) / 2;
        double s = 0;
        for (int64_t a = y0; a < y1; ++a)
          for (int64_t b = x0; b < x1; ++b) s += xv[size_t((nc * 5 + a) * 7 + b)];
        ref.push_back(s / double((y1 - y0) * (x1 - x0)));
      }
  expect_allclose(y, from_vector(ref, {2, 3, 3, 2}), 1e-12, 1e-12);
  // Upsampling sizes repeat input cells.
  Tensor up = adaptive_avg_pool2d(reshape(arange(0.0, 2.0, 1.0, DType::Float64), {1, 1, 1, 2}), {2, 4});
  EXPECT_EQ(up.to_vector<double>(), (std::vector<double>{0, 0, 1, 1, 0, 0, 1, 1}));
}

TEST(AdaptiveAvgPool2dTest, GlobalPoolIsMean) {
  Tensor x = rand_t({2, 3, 4, 5}, 41, DType::Float32);
  Tensor g = global_avg_pool2d(x);
  EXPECT_EQ(g.shape(), (Shape{2, 3, 1, 1}));
  expect_allclose(g, mean(x, {2, 3}, true), 1e-6, 1e-5);
}

TEST(AdaptiveAvgPool2dTest, Gradcheck) {
  Tensor x = rand_leaf({1, 2, 5, 7}, 42);
  auto pool = [](const Tensor& t) { return adaptive_avg_pool2d(t, {3, 4}); };
  expect_gradcheck([&](const std::vector<Tensor>& in) { return pool(in[0]); }, {x});
  expect_backward_is_differentiable(pool, {1, 2, 5, 7}, 43);
}

TEST(Pool2dTest, RejectsBadInputs) {
  EXPECT_THROW(max_pool2d(zeros({3, 4, 4}), {2}), ShapeError);
  EXPECT_THROW(avg_pool2d(zeros({3, 4, 4}), {2}), ShapeError);
  EXPECT_THROW(adaptive_avg_pool2d(zeros({4, 4}), {2}), ShapeError);
  EXPECT_THROW(max_pool2d(zeros({1, 1, 4, 4}), {2}, {2}, {2}), ValueError);  // padding > kernel / 2
  EXPECT_THROW(max_pool2d(zeros({1, 1, 4, 4}), {0}), ValueError);
  EXPECT_THROW(max_pool2d(zeros({1, 1, 2, 2}), {3}), ShapeError);            // window larger than input
  EXPECT_THROW(avg_pool2d(zeros({1, 1, 4, 4}, DType::Int32), {2}), TypeError);
  EXPECT_THROW(adaptive_avg_pool2d(zeros({1, 1, 4, 4}), {0}), ValueError);
}

}  // namespace
}  // namespace skiff

namespace skiff {
namespace {

// Runs the kernel of `op` registered by `backend` (and only it) on `inputs`.
std::vector<Tensor> run_kernel(const std::string& op, const std::string& backend, const std::vector<Tensor>& inputs,
                               const Attrs& attrs) {
  std::vector<Tensor> outputs;
  for (const TensorMeta& m : op_def(op).infer(inputs, attrs)) outputs.push_back(empty(m.shape, m.dtype));
  for (const KernelEntry& k : kernels_for(op))
    if (k.backend == backend) {
      KernelContext ctx{inputs, outputs, attrs};
      if (k.supports && !k.supports(ctx)) return {};
      k.fn(ctx);
      return outputs;
    }
  ADD_FAILURE() << op << " has no " << backend << " kernel";
  return {};
}

Attrs pool_attrs_of(const PoolCase& c) {
  return Attrs{{"kernel", std::vector<int64_t>{c.kh, c.kw}},
               {"stride", std::vector<int64_t>{c.sh, c.sw}},
               {"padding", std::vector<int64_t>{c.ph, c.pw}},
               {"dilation", std::vector<int64_t>{c.dh, c.dw}},
               {"ceil_mode", c.ceil_mode}};
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  auto va = a.to_vector<float>(), vb = b.to_vector<float>();
  if (va.size() != vb.size()) return false;
  for (size_t i = 0; i < va.size(); ++i)
    if (!(va[i] == vb[i] || (std::isnan(va[i]) && std::isnan(vb[i])))) return false;
  return true;
}

// The float32 row kernels the inference engine runs give exactly what the window kernels
// give (NaN included) wherever they take the call, and decline the rest (ceil sizes that
// differ, padded averages).
TEST(Pool2dRowKernels, MatchTheWindowKernelsAndDeclineWhatTheyCannotDo) {
  std::vector<PoolCase> cases = {
      {{2, 3, 9, 8}, 3, 3, 2, 2, 1, 1, 1, 1, false}, {{1, 2, 9, 8}, 3, 2, 2, 3, 1, 1, 2, 1, false},
      {{2, 2, 5, 7}, 2, 3, 1, 2, 0, 1, 1, 2, false}, {{1, 1, 6, 6}, 2, 2, 2, 2, 0, 0, 1, 1, true},
      {{1, 2, 9, 8}, 3, 3, 2, 2, 0, 0, 1, 1, true},  // ceil sizes differ: declined
      {{3, 4, 12, 10}, 3, 2, 3, 2, 0, 0, 1, 1, false}};
  int max_taken = 0, avg_taken = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const PoolCase& c = cases[i];
    SCOPED_TRACE("case " + std::to_string(i));
    Tensor x = to(rand_t(c.x, 40 + i), DType::Float32);
    x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    Attrs a = pool_attrs_of(c);
    auto rows = run_kernel("max_pool2d_values", "cpu-rows", {x}, a);
    auto window = run_kernel("max_pool2d_values", "cpu", {x}, a);
    ASSERT_EQ(window.size(), 1u);
    if (!rows.empty()) {
      ++max_taken;
      EXPECT_TRUE(bitwise_equal(rows[0], window[0]));
    }
    EXPECT_TRUE(bitwise_equal(window[0], max_pool2d_with_indices(x, {c.kh, c.kw}, {c.sh, c.sw}, {c.ph, c.pw},
                                                                  {c.dh, c.dw}, c.ceil_mode)
                                             .values));
    a.set("count_include_pad", true);
    Tensor xf = to(rand_t(c.x, 60 + i), DType::Float32);
    auto avg_rows = run_kernel("avg_pool2d", "cpu-rows", {xf}, a);
    if (!avg_rows.empty()) {
      ++avg_taken;
      expect_allclose(avg_rows[0], run_kernel("avg_pool2d", "cpu", {xf}, a)[0], 1e-6, 1e-6);
      EXPECT_TRUE(c.ph == 0 && c.pw == 0 && c.dh == 1 && c.dw == 1);
    }
  }
  EXPECT_EQ(max_taken, 5);  // all but the differing ceil sizes
  EXPECT_EQ(avg_taken, 2);  // the unpadded, undilated, floor-sized cases
  // Global averages: the row kernel sums a plane in float32.
  Tensor x = to(rand_t({2, 3, 7, 5}, 77), DType::Float32);
  Attrs one{{"output_size", std::vector<int64_t>{1, 1}}};
  expect_allclose(run_kernel("adaptive_avg_pool2d", "cpu-rows", {x}, one)[0],
                  run_kernel("adaptive_avg_pool2d", "cpu", {x}, one)[0], 1e-6, 1e-6);
  EXPECT_TRUE(run_kernel("adaptive_avg_pool2d", "cpu-rows", {x}, {{"output_size", std::vector<int64_t>{2, 1}}}).empty());
}

// No gradient needed: max_pool2d records no argmax; with one, it does and routes the gradient.
TEST(MaxPool2dTest, ValuesAloneWhenNoGradientFlows) {
  Tensor x = rand_t({1, 1, 4, 4}, 91);
  Tensor y = max_pool2d(x, {2, 2});
  EXPECT_FALSE(y.requires_grad());
  Tensor leaf = rand_leaf({1, 1, 4, 4}, 92);
  Tensor z = max_pool2d(leaf, {2, 2});
  EXPECT_TRUE(z.requires_grad());
  backward(sum(z));
  EXPECT_NEAR(sum(leaf.grad()).item<double>(), 4.0, 1e-12);  // one element of each window
}

}  // namespace
}  // namespace skiff
