// The fused conv kernel's pointwise and depthwise loops (framework/backends/onednn/kernels/nn/
// blocked_conv.h) against conv2d followed by the chain as separate ops, on NCHW and nChw16c
// arguments, with channel counts off the 16-block, pixel runs off the tile width, strides,
// paddings, dilation and every post-op kind. The fused kernel runs the active ISA's loops; the
// loops of each narrower ISA are also run directly (blocked in and out).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "framework/backends/onednn/blocked_layout.h"
#include "framework/backends/onednn/kernels/nn/blocked_conv.h"
#include "framework/backends/onednn/v16.h"
#include "framework/core/rng.h"
#include "framework/ops/ops.h"
#include "tests/framework/scoped_threads.h"
#include "framework/core/cpu_features.h"

namespace skiff::onednn {
namespace {

struct Geometry {
  int64_t n, c, h, w, o, k, stride, pad, dilation, groups;
  int64_t row_stride = 0;  // when not 0, the row stride (the column stride is `stride`)
};

Tensor to_blocked(const Tensor& x) {
  Tensor y = zeros({x.size(0), (x.size(1) + kBlock - 1) / kBlock, x.size(2), x.size(3), kBlock});
  run_blocked_reorder(BlockedReorder::Block, x.data<float>(), y.data<float>(),
                      {x.size(0), x.size(1), x.size(2), x.size(3)});
  return y;
}

Tensor apply_reference_chain(Tensor y, const std::vector<PostStep>& chain, const Tensor& residual) {
  for (const PostStep& s : chain) {
    switch (s.kind) {
      case PostOpKind::Relu: y = relu(y); break;
      case PostOpKind::LeakyRelu: y = leaky_relu(y, s.alpha); break;
      case PostOpKind::Clip: y = clamp(y, s.alpha, s.beta); break;
      case PostOpKind::HardSwish: y = hardswish(y); break;
      case PostOpKind::Linear: y = add(mul(y, double(s.alpha)), double(s.beta)); break;
      case PostOpKind::Logistic: y = sigmoid(y); break;
      case PostOpKind::Swish: y = mul(y, sigmoid(mul(y, double(s.alpha)))); break;
      case PostOpKind::Sum: y = add(y, residual); break;
    }
  }
  return y;
}

/// max |got - expected| / max(1, max |expected|); infinite where got is not finite (unwritten).
double relative_error(const Tensor& got, const Tensor& expected) {
  double worst = 0, scale = 1;
  const float* e = expected.data<float>();
  const float* y = got.data<float>();
  for (int64_t i = 0; i < expected.numel(); ++i) {
    if (!std::isfinite(y[i])) return INFINITY;
    worst = std::max(worst, double(std::fabs(y[i] - e[i])));
    scale = std::max(scale, double(std::fabs(e[i])));
  }
  return worst / scale;
}

/// Runs the registered fused kernel and the reference; returns max |diff| / max(1, max |ref|).
double compare(const Geometry& g, const std::vector<PostStep>& chain, bool src_blocked, bool dst_blocked,
               uint64_t seed) {
  Generator gen(seed);
  const Tensor x = randn({g.n, g.c, g.h, g.w}, DType::Float32, &gen);
  const Tensor w = mul(randn({g.o, g.c / g.groups, g.k, g.k}, DType::Float32, &gen), 0.3);
  const Tensor b = randn({g.o}, DType::Float32, &gen);
  const std::vector<int64_t> stride{g.row_stride ? g.row_stride : g.stride, g.stride};
  const Tensor conv = conv2d(x, w, b, stride, {g.pad}, {g.dilation}, g.groups);
  const Tensor residual = randn(conv.shape(), DType::Float32, &gen);
  const Tensor ref = apply_reference_chain(conv, chain, residual);

  Attrs a;
  a.set("stride", stride);
  a.set("padding", std::vector<int64_t>{g.pad, g.pad});
  a.set("dilation", std::vector<int64_t>{g.dilation, g.dilation});
  a.set("groups", g.groups);
  a.set("has_bias", true);
  std::vector<int64_t> kinds;
  std::vector<double> alpha, beta;
  bool with_sum = false;
  for (const PostStep& s : chain) {
    kinds.push_back(int64_t(s.kind));
    alpha.push_back(s.alpha);
    beta.push_back(s.beta);
    with_sum |= s.kind == PostOpKind::Sum;
  }
  a.set("post_kinds", kinds);
  a.set("post_alpha", alpha);
  a.set("post_beta", beta);
  std::vector<Tensor> inputs{src_blocked ? to_blocked(x) : x, w, b};
  if (with_sum) inputs.push_back(residual);
  // Filled with NaN: every output element, padded channels included, must be written.
  const Shape out_shape = dst_blocked ? Shape{ref.size(0), (g.o + kBlock - 1) / kBlock, ref.size(2), ref.size(3), kBlock}
                                      : ref.shape();
  std::vector<Tensor> outputs{full(out_shape, std::nan(""), DType::Float32)};
  const KernelEntry& kernel = find_kernel("fused_conv2d", kCPU, DType::Float32);
  EXPECT_EQ(kernel.backend, "onednn");
  kernel.fn(KernelContext{inputs, outputs, a});
  const Tensor expected = dst_blocked ? to_blocked(ref) : ref;  // padded channels zero
  const Tensor got = outputs[0];
  // The narrower ISAs' loops, blocked in and out, must agree with the kernel's to rounding.
  const nn_detail::Conv2dParams p = nn_detail::Conv2dParams::from(x.shape(), w.shape(), a);
  std::vector<float> packed(blocked_conv_packed_floats(p));
  pack_blocked_conv_weights(p, w.data<float>(), packed.data());
  const Tensor xb = to_blocked(x), rb = to_blocked(residual), eb = to_blocked(ref);
  for (CpuIsa isa : {CpuIsa::Baseline, CpuIsa::Avx2}) {
    if (isa >= active_isa()) continue;
    Tensor out = full(eb.shape(), std::nan(""), DType::Float32);
    run_blocked_conv(p, {xb.data<float>(), packed.data(), b.data<float>(), rb.data<float>(), out.data<float>()}, chain,
                     isa);
    EXPECT_LT(relative_error(out, eb), 1e-5) << isa_name(isa) << " loops";
  }
  return relative_error(got, expected);
}

const std::vector<PostStep> kChains[] = {
    {},
    {{PostOpKind::HardSwish, 0, 0}},
    {{PostOpKind::Linear, 0.5f, -0.25f}, {PostOpKind::Clip, -1.f, 2.f}},
    {{PostOpKind::Sum, 0, 0}, {PostOpKind::Relu, 0, 0}},
    {{PostOpKind::LeakyRelu, 0.1f, 0}, {PostOpKind::Logistic, 0, 0}},
    {{PostOpKind::Swish, 1.5f, 0}, {PostOpKind::Linear, 2.f, 1.f}},
};

TEST(BlockedConv, PointwiseMatchesConvThenChain) {
  for (const Geometry& g : std::vector<Geometry>{
           {1, 16, 4, 6, 16, 1, 1, 0, 1, 1},     // one block each way
           {2, 20, 5, 7, 40, 1, 1, 0, 1, 1},     // channel tails, 35 pixels (tile tails), odd blocks
           {3, 64, 1, 1, 24, 1, 1, 0, 1, 1},     // 1x1 maps (squeeze-excite gates)
           {1, 3, 13, 29, 48, 1, 1, 0, 1, 1},    // three input channels
           {1, 96, 8, 40, 80, 1, 1, 0, 1, 1}}) { // 5 output blocks: two pairs and one
    ASSERT_EQ(blocked_conv_kind(nn_detail::Conv2dParams{g.n, g.c, g.h, g.w, g.o, 1, 1, g.h, g.w}),
              BlockedConvKind::Pointwise);
    for (size_t ci = 0; ci < std::size(kChains); ++ci)
      for (int layout = 0; layout < 4; ++layout) {
        SCOPED_TRACE(::testing::Message() << "c" << g.c << " o" << g.o << " " << g.h << "x" << g.w << " chain " << ci
                                          << " layout " << layout);
        EXPECT_LT(compare(g, kChains[ci], layout & 1, layout & 2, 7 + ci), 1e-5);
      }
  }
}

TEST(BlockedConv, DepthwiseMatchesConvThenChain) {
  for (const Geometry& g : std::vector<Geometry>{
           {1, 16, 9, 30, 16, 3, 1, 1, 1, 16},   // sliding-window tile, edges
           {2, 32, 12, 40, 32, 3, 1, 1, 1, 32, 2},  // rows strided, columns not (PP-OCR rec)
           {1, 16, 12, 40, 16, 5, 1, 2, 1, 16, 2},
           {2, 24, 7, 41, 24, 5, 1, 2, 1, 24},   // 5-wide window, channel tail
           {1, 32, 12, 25, 32, 3, 2, 1, 1, 32},  // stride 2
           {1, 16, 6, 6, 16, 7, 1, 3, 1, 16},    // window wider than the interior
           {1, 16, 11, 20, 16, 3, 1, 2, 2, 16},  // dilation 2
           {3, 40, 3, 80, 40, 3, 1, 0, 1, 40},   // no padding
           {1, 8, 2, 3, 8, 3, 1, 1, 1, 8}}) {    // fewer columns than a tile
    for (size_t ci = 0; ci < std::size(kChains); ++ci)
      for (int layout = 0; layout < 4; ++layout) {
        SCOPED_TRACE(::testing::Message() << "c" << g.c << " k" << g.k << " s" << g.row_stride << "x" << g.stride
                                          << " p" << g.pad << " d"
                                          << g.dilation << " chain " << ci << " layout " << layout);
        EXPECT_LT(compare(g, kChains[ci], layout & 1, layout & 2, 11 + ci), 1e-5);
      }
  }
}

TEST(BlockedConv, SameResultsOnOneAndTwoThreads) {
  const Geometry pw{2, 48, 9, 31, 72, 1, 1, 0, 1, 1}, dw{2, 48, 9, 31, 48, 3, 1, 1, 1, 48};
  for (const Geometry& g : {pw, dw}) {
    double one, two;
    {
      testutil::ScopedNumThreads t(1);
      one = compare(g, kChains[1], true, true, 3);
    }
    {
      testutil::ScopedNumThreads t(2);
      two = compare(g, kChains[1], true, true, 3);
    }
    EXPECT_LT(one, 1e-5);
    EXPECT_EQ(one, two);
  }
}

TEST(BlockedConv, DenseMatchesConvThenChain) {
  for (const Geometry& g : std::vector<Geometry>{
           {1, 16, 9, 30, 24, 3, 1, 1, 1, 1},      // 3x3, output channel tail, zero columns written out
           {1, 16, 4, 45, 16, 3, 1, 1, 1, 1},      // wide rows: edge columns a pixel at a time
           {2, 40, 7, 21, 40, 3, 2, 1, 1, 1},      // stride 2, input channel tail, odd blocks
           {1, 32, 1, 40, 20, 3, 1, 1, 1, 1, 1},   // one row (PP-OCR rec's 1x3 neck, as 3x3 on 1 row)
           {1, 16, 10, 13, 16, 5, 1, 2, 2, 1},     // 5x5, dilation 2
           {1, 16, 6, 5, 48, 3, 1, 0, 1, 1}}) {    // no padding, fewer columns than a tile
    ASSERT_EQ(blocked_conv_kind(nn_detail::Conv2dParams::from(
                  {g.n, g.c, g.h, g.w}, {g.o, g.c, g.k, g.k},
                  Attrs().set("stride", std::vector<int64_t>{g.row_stride ? g.row_stride : g.stride, g.stride})
                      .set("padding", std::vector<int64_t>{g.pad, g.pad})
                      .set("dilation", std::vector<int64_t>{g.dilation, g.dilation})
                      .set("groups", int64_t(1)))),
              BlockedConvKind::Dense);
    for (size_t ci = 0; ci < std::size(kChains); ++ci)
      for (int layout = 0; layout < 4; ++layout) {
        SCOPED_TRACE(::testing::Message() << "c" << g.c << " o" << g.o << " k" << g.k << " s" << g.stride << " p"
                                          << g.pad << " d" << g.dilation << " chain " << ci << " layout " << layout);
        EXPECT_LT(compare(g, kChains[ci], layout & 1, layout & 2, 17 + ci), 1e-5);
      }
  }
}

// The post-op chain's Logistic and Swish steps use exp16: within 3 ulp of the float64 exp
// over the whole finite range, and the ends and NaN as std::exp gives them.
TEST(BlockedConv, Exp16MatchesStdExp) {
  std::vector<float> xs;
  for (float v = -87.0f; v < 88.5f; v += 0.0371f) xs.push_back(v);
  for (size_t i = 0; i + 16 <= xs.size(); i += 16) {
    const v16 y = exp16(load(xs.data() + i));
    for (int j = 0; j < 16; ++j) {
      const double ref = std::exp(double(xs[i + size_t(j)]));
      EXPECT_NEAR(y[j], ref, 3.6e-7 * ref) << "x=" << xs[i + size_t(j)];
    }
  }
  const float inf = std::numeric_limits<float>::infinity();
  float special[16] = {0.f, -inf, inf, std::nanf(""), 100.f, -100.f, 88.f, -87.f};
  const v16 y = exp16(load(special));
  EXPECT_EQ(y[0], 1.f);
  EXPECT_EQ(y[1], 0.f);
  EXPECT_EQ(y[2], inf);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], inf);
  EXPECT_EQ(y[5], 0.f);
  EXPECT_NEAR(y[6], std::exp(88.0), 3.6e-7 * std::exp(88.0));
}

TEST(BlockedConv, OtherGeometriesAreLeftToOneDnn) {
  using nn_detail::Conv2dParams;
  Conv2dParams rgb{1, 3, 8, 8, 16, 3, 3, 6, 6};  // a stem on 3 channels: blocking them costs 5x
  EXPECT_EQ(blocked_conv_kind(rgb), BlockedConvKind::None);
  Conv2dParams strided{1, 16, 8, 8, 32, 1, 1, 3, 3, 3, 3};  // column stride 3
  EXPECT_EQ(blocked_conv_kind(strided), BlockedConvKind::None);
  Conv2dParams grouped{1, 16, 8, 8, 32, 1, 1, 8, 8};
  grouped.groups = 2;
  EXPECT_EQ(blocked_conv_kind(grouped), BlockedConvKind::None);
}

}  // namespace
}  // namespace skiff::onednn
