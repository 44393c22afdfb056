// conv2d, conv1d, conv_transpose2d and the conv2d backward ops: values against naive loops written
// here, the oneDNN kernels against the reference "cpu" kernels, errors, and float64 gradient checks.
#include <gtest/gtest.h>

#include <string>

#include "framework/core/threading.h"
#include "framework/ops/nn/conv.h"
#include "tests/framework/ops/op_test_utils.h"

namespace skiff {
namespace {

using testing::expect_allclose;
using testing::expect_gradcheck;
using testing::expect_gradgradcheck;
using testing::rand_leaf;

struct ConvCase {
  Shape x, w;
  int64_t sh, sw, ph, pw, dh, dw, groups;
  bool bias;
};

// Covers stride, padding, dilation, groups, depthwise, 1x1 and non-square shapes.
const std::vector<ConvCase> kCases = {
    {{2, 3, 7, 6}, {4, 3, 3, 3}, 1, 1, 1, 1, 1, 1, 1, true},
    {{1, 4, 9, 8}, {6, 2, 3, 2}, 2, 1, 1, 0, 1, 1, 2, false},
    {{2, 2, 8, 9}, {3, 2, 2, 3}, 2, 3, 0, 2, 2, 1, 1, true},
    {{2, 6, 6, 5}, {6, 1, 3, 3}, 1, 1, 1, 1, 1, 1, 6, true},   // depthwise
    {{1, 4, 10, 10}, {8, 1, 3, 3}, 2, 2, 1, 1, 1, 1, 4, false}, // depthwise multiplier 2
    {{3, 5, 4, 4}, {7, 5, 1, 1}, 1, 1, 0, 0, 1, 1, 1, true},   // pointwise
    {{1, 3, 11, 5}, {2, 3, 5, 1}, 3, 1, 2, 0, 2, 1, 1, true},  // window stops short of the bottom edge
    {{2, 64, 10, 9}, {64, 64, 3, 3}, 1, 1, 1, 1, 1, 1, 1, true},  // wide 3x3 stride 1: oneDNN runs Winograd
    // Depthwise stride 1 (the direct NCHW kernel): full 16-wide blocks plus a partial one,
    // a 5x5 window, no padding, and asymmetric padding.
    {{2, 4, 9, 37}, {4, 1, 5, 5}, 1, 1, 2, 2, 1, 1, 4, true},
    {{1, 3, 8, 20}, {3, 1, 3, 3}, 1, 1, 0, 0, 1, 1, 3, false},
    {{1, 2, 7, 18}, {2, 1, 3, 3}, 1, 1, 2, 1, 1, 1, 2, true},
    // Depthwise stride 2 (the direct weight-gradient loops): a 5x5 window on odd sizes, a 3x3
    // one with the stride in one direction only, and dilation 2 (oneDNN's path).
    {{2, 5, 11, 21}, {5, 1, 5, 5}, 2, 2, 2, 2, 1, 1, 5, false},
    {{1, 3, 9, 34}, {3, 1, 3, 3}, 1, 2, 1, 1, 1, 1, 3, true},
    {{1, 3, 9, 10}, {3, 1, 3, 3}, 1, 1, 2, 2, 2, 2, 3, false},
    // 1x1 stride 2 on an even size (a ResNet shortcut): the last row and column are never read.
    {{2, 8, 8, 6}, {16, 8, 1, 1}, 2, 2, 0, 0, 1, 1, 1, false},
};

Tensor rand_t(const Shape& s, uint64_t seed, DType dtype = DType::Float64) {
  Generator g(seed);
  return rand(s, dtype, &g, -1.0, 1.0);
}

// Float32 tolerance for comparing against `ref`: rounding grows with the size of the sums, so
// the absolute part scales with the largest reference value (sums of hundreds of terms reach ~25;
// the results of such a sum near zero still carry its rounding).
double f32_atol(const Tensor& ref) {
  double m = 1.0;
  for (double v : to(ref, DType::Float64).to_vector<double>()) m = std::max(m, std::abs(v));
  return 1e-5 * m;
}

// y[n, o, i, j] = b[o] + sum x[n, c, i*sh - ph + ki*dh, j*sw - pw + kj*dw] * w[o, c - g*Cg, ki, kj].
Tensor naive_conv2d(const Tensor& x, const Tensor& w, const Tensor* b, const ConvCase& c) {
  auto xv = to(x, DType::Float64).to_vector<double>();
  auto wv = to(w, DType::Float64).to_vector<double>();
  std::vector<double> bv = b ? to(*b, DType::Float64).to_vector<double>() : std::vector<double>();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), Cg = w.size(1), KH = w.size(2), KW = w.size(3), Og = O / c.groups;
  const int64_t OH = (H + 2 * c.ph - c.dh * (KH - 1) - 1) / c.sh + 1;
  const int64_t OW = (W + 2 * c.pw - c.dw * (KW - 1) - 1) / c.sw + 1;
  std::vector<double> y(size_t(N * O * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double s = b ? bv[size_t(o)] : 0.0;
          const int64_t g = o / Og;
          for (int64_t cc = 0; cc < Cg; ++cc)
            for (int64_t ki = 0; ki < KH; ++ki)
              for (int64_t kj = 0; kj < KW; ++kj) {
                int64_t iy = i * c.sh - c.ph + ki * c.dh, ix = j * c.sw - c.pw + kj * c.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                s += xv[size_t(((n * C + g * Cg + cc) * H + iy) * W + ix)] *
                     wv[size_t(((o * Cg + cc) * KH + ki) * KW + kj)];
              }
          y[size_t(((n * O + o) * OH + i) * OW + j)] = s;
        }
  return from_vector(y, {N, O, OH, OW});
}

Tensor run_conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, const ConvCase& c) {
  return conv2d(x, w, b, {c.sh, c.sw}, {c.ph, c.pw}, {c.dh, c.dw}, c.groups);
}

TEST(Conv2dTest, HandComputedValues) {
  // 1x1x3x3 input 1..9, 2x2 kernel of ones, bias 0.5: each output is a 2x2 window sum + 0.5.
  Tensor x = reshape(arange(1.0, 10.0, 1.0, DType::Float32), {1, 1, 3, 3});
  Tensor w = ones({1, 1, 2, 2});
  Tensor y = conv2d(x, w, full({1}, 0.5));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{12.5f, 16.5f, 24.5f, 28.5f}));
  // Padding 1, stride 2: windows at (-1,-1), (-1,1), (1,-1), (1,1).
  Tensor yp = conv2d(x, w, std::nullopt, {2}, {1});
  EXPECT_EQ(yp.to_vector<float>(), (std::vector<float>{1, 5, 11, 28}));
}

TEST(Conv2dTest, MatchesNaiveLoopsFloat64) {
  for (size_t i = 0; i < kCases.size(); ++i) {
    const ConvCase& c = kCases[i];
    Tensor x = rand_t(c.x, 10 + i), w = rand_t(c.w, 20 + i), b = rand_t({c.w[0]}, 30 + i);
    SCOPED_TRACE("case " + std::to_string(i));
    expect_allclose(run_conv(x, w, c.bias ? std::optional<Tensor>(b) : std::nullopt, c),
                    naive_conv2d(x, w, c.bias ? &b : nullptr, c), 1e-12, 1e-12);
  }
}

TEST(Conv2dTest, MatchesNaiveLoopsFloat32) {
  for (size_t i = 0; i < kCases.size(); ++i) {
    const ConvCase& c = kCases[i];
    Tensor x = rand_t(c.x, 40 + i, DType::Float32), w = rand_t(c.w, 50 + i, DType::Float32);
    Tensor b = rand_t({c.w[0]}, 60 + i, DType::Float32);
    SCOPED_TRACE("case " + std::to_string(i));
    Tensor y = run_conv(x, w, c.bias ? std::optional<Tensor>(b) : std::nullopt, c);
    EXPECT_EQ(y.dtype(), DType::Float32);
    Tensor ref = naive_conv2d(x, w, c.bias ? &b : nullptr, c);
    expect_allclose(y, ref, f32_atol(ref), 1e-4);
  }
}

TEST(Conv2dTest, AcceptsNonContiguousInputs) {
  ConvCase c{{2, 3, 5, 6}, {4, 3, 3, 3}, 1, 2, 1, 1, 1, 1, 1, false};
  Tensor x_t = rand_t({2, 3, 6, 5}, 1);
  Tensor x = transpose(x_t, 2, 3);  // [2, 3, 5, 6], non-contiguous
  Tensor w = rand_t(c.w, 2);
  ASSERT_FALSE(x.is_contiguous());
  expect_allclose(run_conv(x, w, std::nullopt, c), naive_conv2d(contiguous(x), w, nullptr, c), 1e-12, 1e-12);
  expect_allclose(run_conv(to(x, DType::Float32), to(w, DType::Float32), std::nullopt, c),
                  naive_conv2d(contiguous(x), w, nullptr, c), 1e-5, 1e-4);
}

// Runs an op's kernel of a given backend directly (bypassing priority).
Tensor run_backend(const std::string& op, const std::string& backend, const std::vector<Tensor>& inputs,
                   const Attrs& attrs, const Shape& out_shape) {
  for (const KernelEntry& k : kernels_for(op)) {
    if (k.backend != backend) continue;
    std::vector<Tensor> outputs{empty(out_shape, inputs[0].dtype())};
    KernelContext ctx{inputs, outputs, attrs};
    k.fn(ctx);
    return outputs[0];
  }
  return Tensor();
}

TEST(Conv2dTest, OnednnMatchesReference) {
  bool have_onednn = false;
  for (const KernelEntry& k : kernels_for("conv2d")) have_onednn |= k.backend == "onednn";
  if (!have_onednn) GTEST_SKIP() << "built without the oneDNN backend";
  for (size_t i = 0; i < kCases.size(); ++i) {
    const ConvCase& c = kCases[i];
    SCOPED_TRACE("case " + std::to_string(i));
    Tensor x = rand_t(c.x, 70 + i, DType::Float32), w = rand_t(c.w, 80 + i, DType::Float32);
    Tensor b = rand_t({c.w[0]}, 90 + i, DType::Float32);
    Attrs a{{"stride", std::vector<int64_t>{c.sh, c.sw}}, {"padding", std::vector<int64_t>{c.ph, c.pw}},
            {"dilation", std::vector<int64_t>{c.dh, c.dw}}, {"groups", c.groups}};
    Tensor y_ref = naive_conv2d(x, w, &b, c);
    const Shape& ys = y_ref.shape();
    std::vector<Tensor> fwd_in{x, w, b};
    Tensor y_cpu = run_backend("conv2d", "cpu", fwd_in, a, ys);
    expect_allclose(run_backend("conv2d", "onednn", fwd_in, a, ys), y_cpu, f32_atol(y_cpu), 1e-4);
    Tensor gy = rand_t(ys, 100 + i, DType::Float32);
    Attrs ai = a, aw = a;
    ai.set("input_size", c.x.vec());
    aw.set("weight_size", c.w.vec());
    Tensor gx_cpu = run_backend("conv2d_backward_input", "cpu", {gy, w}, ai, c.x);
    expect_allclose(run_backend("conv2d_backward_input", "onednn", {gy, w}, ai, c.x), gx_cpu, f32_atol(gx_cpu), 1e-4);
    Tensor gw_cpu = run_backend("conv2d_backward_weight", "cpu", {gy, x}, aw, c.w);
    expect_allclose(run_backend("conv2d_backward_weight", "onednn", {gy, x}, aw, c.w), gw_cpu,
                    10 * f32_atol(gw_cpu), 1e-4);
  }
}

TEST(Conv2dTest, ReferenceKernelsIndependentOfThreadCount) {
  const int initial_threads = num_threads();
  for (const ConvCase& c : {ConvCase{{4, 8, 12, 12}, {8, 4, 3, 3}, 1, 1, 1, 1, 1, 1, 2, false},
                            ConvCase{{1, 16, 20, 20}, {16, 16, 3, 3}, 1, 1, 1, 1, 1, 1, 1, false}}) {
    Attrs a{{"stride", std::vector<int64_t>{c.sh, c.sw}}, {"padding", std::vector<int64_t>{c.ph, c.pw}},
            {"dilation", std::vector<int64_t>{c.dh, c.dw}}, {"groups", c.groups}};
    Attrs ai = a, aw = a;
    ai.set("input_size", c.x.vec());
    aw.set("weight_size", c.w.vec());
    Tensor x = rand_t(c.x, 110), w = rand_t(c.w, 111);
    Tensor gy = rand_t(naive_conv2d(x, w, nullptr, c).shape(), 112);
    std::vector<std::vector<double>> results[2];
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      auto& r = results[threads - 1];
      r.push_back(run_backend("conv2d", "cpu", {x, w}, a, gy.shape()).to_vector<double>());
      r.push_back(run_backend("conv2d_backward_input", "cpu", {gy, w}, ai, c.x).to_vector<double>());
      r.push_back(run_backend("conv2d_backward_weight", "cpu", {gy, x}, aw, c.w).to_vector<double>());
    }
    EXPECT_EQ(results[0], results[1]);
  }
  set_num_threads(initial_threads);
}

TEST(Conv2dTest, RejectsMismatchedChannels) {
  Tensor x = zeros({1, 3, 5, 5}), w = zeros({4, 2, 3, 3});
  try {
    conv2d(x, w);
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("[1, 3, 5, 5]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 2, 3, 3]"), std::string::npos) << msg;
  }
  EXPECT_THROW(conv2d(zeros({1, 4, 5, 5}), zeros({3, 2, 3, 3}), std::nullopt, {1}, {0}, {1}, 2), ShapeError);
  EXPECT_THROW(conv2d(zeros({1, 2, 5, 5}), zeros({4, 2, 3, 3}), zeros({3})), ShapeError);
}

TEST(Conv2dTest, RejectsBadRanksSizesAndDtypes) {
  EXPECT_THROW(conv2d(zeros({3, 5, 5}), zeros({4, 3, 3, 3})), ShapeError);
  EXPECT_THROW(conv2d(zeros({1, 3, 5, 5}), zeros({4, 3, 3})), ShapeError);
  EXPECT_THROW(conv2d(zeros({1, 3, 2, 2}), zeros({4, 3, 3, 3})), ShapeError);  // kernel larger than input
  EXPECT_THROW(conv2d(zeros({1, 3, 5, 5}), zeros({4, 3, 3, 3}), std::nullopt, {0}), ValueError);
  EXPECT_THROW(conv2d(zeros({1, 3, 5, 5}), zeros({4, 3, 3, 3}), std::nullopt, {1}, {-1}), ValueError);
  EXPECT_THROW(conv2d(zeros({1, 3, 5, 5}, DType::Int64), zeros({4, 3, 3, 3}, DType::Int64)), TypeError);
  EXPECT_THROW(conv2d(zeros({1, 3, 5, 5}), zeros({4, 3, 3, 3}, DType::Float64)), TypeError);
  EXPECT_THROW(conv1d(zeros({1, 3, 5, 5}), zeros({4, 3, 3})), ShapeError);
}

TEST(Conv2dTest, EmptyBatch) {
  Tensor y = conv2d(zeros({0, 3, 5, 5}), ones({4, 3, 3, 3}), std::nullopt, {1}, {1});
  EXPECT_EQ(y.shape(), (Shape{0, 4, 5, 5}));
}

TEST(Conv2dTest, Gradcheck) {
  Tensor x = rand_leaf({2, 4, 5, 6}, 1), w = rand_leaf({4, 2, 3, 2}, 2), b = rand_leaf({4}, 3);
  expect_gradcheck([](const std::vector<Tensor>& in) {
    return conv2d(in[0], in[1], in[2], {2, 1}, {1, 1}, {1, 2}, 2);
  }, {x, w, b});
  Tensor xd = rand_leaf({1, 3, 5, 5}, 4), wd = rand_leaf({3, 1, 3, 3}, 5);
  expect_gradcheck([](const std::vector<Tensor>& in) { return conv2d(in[0], in[1], std::nullopt, {1}, {1}, {1}, 3); },
                   {xd, wd});
}

TEST(Conv2dTest, GradGradcheck) {
  Tensor x = rand_leaf({2, 2, 5, 4}, 6), w = rand_leaf({4, 1, 2, 3}, 7), b = rand_leaf({4}, 8);
  expect_gradgradcheck([](const std::vector<Tensor>& in) {
    return conv2d(in[0], in[1], in[2], {2, 1}, {1, 1}, {1, 1}, 2);
  }, {x, w, b});
}

TEST(Conv2dTest, BackwardOpsGradcheck) {
  // Both backward ops are bilinear; checking them in every argument covers double backward.
  Tensor gy = rand_leaf({2, 4, 3, 4}, 9), w = rand_leaf({4, 1, 3, 3}, 10), x = rand_leaf({2, 2, 5, 4}, 11);
  expect_gradcheck([](const std::vector<Tensor>& in) {
    return conv2d_backward_input(in[0], in[1], {2, 2, 5, 4}, {2, 1}, {1, 1}, {1, 1}, 2);
  }, {gy, w});
  expect_gradcheck([](const std::vector<Tensor>& in) {
    return conv2d_backward_weight(in[0], in[1], {4, 1, 3, 3}, {2, 1}, {1, 1}, {1, 1}, 2);
  }, {gy, x});
}

TEST(Conv1dTest, MatchesNaiveLoops) {
  Tensor x = rand_t({2, 4, 9}, 12), w = rand_t({6, 2, 3}, 13), b = rand_t({6}, 14);
  Tensor y = conv1d(x, w, b, 2, 1, 2, 2);
  ConvCase c{{2, 4, 1, 9}, {6, 2, 1, 3}, 1, 2, 0, 1, 1, 2, 2, true};
  expect_allclose(y, reshape(naive_conv2d(unsqueeze(x, 2), unsqueeze(w, 2), &b, c), y.shape()), 1e-12, 1e-12);
  EXPECT_EQ(y.shape(), (Shape{2, 6, 4}));
  Tensor xl = rand_leaf({1, 2, 6}, 15), wl = rand_leaf({3, 2, 2}, 16);
  expect_gradcheck([](const std::vector<Tensor>& in) { return conv1d(in[0], in[1], std::nullopt, 1, 1); },
                   {xl, wl});
}

// y[n, g*Og + o, i*sh - p + ki*d, j*sw - p + kj*d] += x[n, g*Cg + c, i, j] * w[g*Cg + c, o, ki, kj].
Tensor naive_conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor* b, int64_t sh, int64_t sw, int64_t p,
                              int64_t out_pad, int64_t d, int64_t groups) {
  auto xv = x.to_vector<double>();
  auto wv = w.to_vector<double>();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t Og = w.size(1), KH = w.size(2), KW = w.size(3), O = Og * groups, Cg = C / groups;
  const int64_t OH = (H - 1) * sh - 2 * p + d * (KH - 1) + out_pad + 1;
  const int64_t OW = (W - 1) * sw - 2 * p + d * (KW - 1) + out_pad + 1;
  std::vector<double> y(size_t(N * O * OH * OW), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j)
          for (int64_t o = 0; o < Og; ++o)
            for (int64_t ki = 0; ki < KH; ++ki)
              for (int64_t kj = 0; kj < KW; ++kj) {
                int64_t oy = i * sh - p + ki * d, ox = j * sw - p + kj * d;
                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                int64_t oc = (c / Cg) * Og + o;
                y[size_t(((n * O + oc) * OH + oy) * OW + ox)] +=
                    xv[size_t(((n * C + c) * H + i) * W + j)] * wv[size_t(((c * Og + o) * KH + ki) * KW + kj)];
              }
  if (b) {
    auto bv = b->to_vector<double>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t k = 0; k < OH * OW; ++k) y[size_t((n * O + o) * OH * OW + k)] += bv[size_t(o)];
  }
  return from_vector(y, {N, O, OH, OW});
}

TEST(ConvTranspose2dTest, MatchesNaiveLoops) {
  struct Case { Shape x, w; int64_t s, p, out_pad, d, groups; };
  for (const Case& c : {Case{{2, 4, 3, 4}, {4, 3, 3, 3}, 2, 1, 1, 1, 1}, Case{{1, 4, 4, 3}, {4, 2, 2, 3}, 1, 0, 0, 2, 2},
                        Case{{1, 3, 5, 5}, {3, 1, 3, 3}, 3, 1, 2, 1, 3}}) {
    Tensor x = rand_t(c.x, 17), w = rand_t(c.w, 18), b = rand_t({c.w[1] * c.groups}, 19);
    Tensor y = conv_transpose2d(x, w, b, {c.s}, {c.p}, {c.out_pad}, c.groups, {c.d});
    expect_allclose(y, naive_conv_transpose2d(x, w, &b, c.s, c.s, c.p, c.out_pad, c.d, c.groups), 1e-12, 1e-12);
    Tensor y32 = conv_transpose2d(to(x, DType::Float32), to(w, DType::Float32), to(b, DType::Float32), {c.s}, {c.p},
                                  {c.out_pad}, c.groups, {c.d});
    expect_allclose(y32, naive_conv_transpose2d(x, w, &b, c.s, c.s, c.p, c.out_pad, c.d, c.groups), 1e-5, 1e-4);
  }
  EXPECT_THROW(conv_transpose2d(zeros({1, 2, 3, 3}), zeros({3, 2, 3, 3})), ShapeError);
  EXPECT_THROW(conv_transpose2d(zeros({1, 2, 3, 3}), zeros({2, 2, 3, 3}), std::nullopt, {2}, {0}, {2}), ValueError);
}

// Stride equal to the kernel (the DB head's 2x2 upsampling): each input pixel writes its own
// block, which conv_transpose2d computes as a matrix product and a pixel shuffle.
TEST(ConvTranspose2dTest, TilingWindowsMatchNaiveLoops) {
  struct Case { Shape x, w; };
  for (const Case& c : {Case{{2, 4, 3, 5}, {4, 3, 2, 2}}, Case{{1, 3, 4, 2}, {3, 2, 2, 3}},
                        Case{{3, 2, 1, 1}, {2, 5, 3, 1}}, Case{{1, 24, 30, 26}, {24, 1, 2, 2}}}) {
    const int64_t sh = c.w[2], sw = c.w[3];
    Tensor x = rand_t(c.x, 23), w = rand_t(c.w, 24), b = rand_t({c.w[1]}, 25);
    Tensor want = naive_conv_transpose2d(x, w, &b, sh, sw, 0, 0, 1, 1);
    expect_allclose(conv_transpose2d(x, w, b, {sh, sw}), want, 1e-12, 1e-12);
    Tensor y32 = conv_transpose2d(to(x, DType::Float32), to(w, DType::Float32), to(b, DType::Float32), {sh, sw});
    expect_allclose(y32, want, 1e-5, 1e-4);
    Tensor no_bias = naive_conv_transpose2d(x, w, nullptr, sh, sw, 0, 0, 1, 1);
    expect_allclose(conv_transpose2d(x, w, std::nullopt, {sh, sw}), no_bias, 1e-12, 1e-12);
  }
}

TEST(ConvTranspose2dTest, TilingWindowsGradcheck) {
  Tensor x = rand_leaf({2, 3, 2, 3}, 26), w = rand_leaf({3, 2, 2, 3}, 27), b = rand_leaf({2}, 28);
  auto f = [](const std::vector<Tensor>& in) { return conv_transpose2d(in[0], in[1], in[2], {2, 3}); };
  expect_gradcheck(f, {x, w, b});
  expect_gradgradcheck(f, {x, w, b});
}

TEST(ConvTranspose2dTest, Gradcheck) {
  Tensor x = rand_leaf({2, 4, 3, 3}, 20), w = rand_leaf({4, 1, 3, 2}, 21), b = rand_leaf({2}, 22);
  expect_gradcheck([](const std::vector<Tensor>& in) {
    return conv_transpose2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 0}, 2);
  }, {x, w, b});
  expect_gradgradcheck([](const std::vector<Tensor>& in) {
    return conv_transpose2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 0}, 2);
  }, {x, w, b});
}

}  // namespace
}  // namespace skiff
