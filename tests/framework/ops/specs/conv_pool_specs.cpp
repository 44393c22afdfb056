// Specs of convolution and pooling, forward and backward. The references are the
// textbook loops over output positions and kernel taps (in float64); the backward
// references scatter through the same loops (conv) or the window's first maximum
// (max pooling), or differentiate the forward numerically (average pooling).
// Float32 samples include shapes the fast kernels take: oneDNN convolutions, the
// depthwise NCHW path, and the "cpu-rows" pooling kernels.
#include <array>
#include <cmath>
#include <limits>

#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using V = std::vector<int64_t>;

struct Conv {
  V stride{1, 1}, pad{0, 0}, dil{1, 1};
  int64_t groups = 1;
};

// Calls tap(n, o, oh, ow, c, cg, i, j, ih, iw) for every product term of conv2d.
template <typename Tap>
void conv_taps(const Shape& x, const Shape& w, const Shape& y, const Conv& p, Tap&& tap) {
  const int64_t cpg = w[1], opg = w[0] / p.groups;
  for (int64_t n = 0; n < y[0]; ++n)
    for (int64_t o = 0; o < y[1]; ++o)
      for (int64_t oh = 0; oh < y[2]; ++oh)
        for (int64_t ow = 0; ow < y[3]; ++ow)
          for (int64_t cg = 0; cg < cpg; ++cg)
            for (int64_t i = 0; i < w[2]; ++i)
              for (int64_t j = 0; j < w[3]; ++j) {
                int64_t ih = oh * p.stride[0] - p.pad[0] + i * p.dil[0];
                int64_t iw = ow * p.stride[1] - p.pad[1] + j * p.dil[1];
                if (ih < 0 || iw < 0 || ih >= x[2] || iw >= x[3]) continue;
                tap(n, o, oh, ow, (o / opg) * cpg + cg, cg, i, j, ih, iw);
              }
}

Shape conv_out(const Shape& x, const Shape& w, const Conv& p) {
  auto o = [](int64_t in, int64_t k, int64_t s, int64_t pd, int64_t d) { return (in + 2 * pd - d * (k - 1) - 1) / s + 1; };
  return {x[0], w[0], o(x[2], w[2], p.stride[0], p.pad[0], p.dil[0]), o(x[3], w[3], p.stride[1], p.pad[1], p.dil[1])};
}

Tensor ref_conv(const Tensor& x, const Tensor& w, const Tensor& b, const Conv& p, DType out) {
  Shape ys = conv_out(x.shape(), w.shape(), p);
  std::vector<double> xv = values(x), wv = values(w), y(size_t(ys.numel()), 0.0);
  std::vector<double> bv = b.defined() ? values(b) : std::vector<double>(size_t(ys[1]), 0.0);
  for (int64_t i = 0; i < ys.numel(); ++i) y[size_t(i)] = bv[size_t(unravel(i, ys)[1])];
  conv_taps(x.shape(), w.shape(), ys, p, [&](auto n, auto o, auto oh, auto ow, auto c, auto cg, auto i, auto j, auto ih, auto iw) {
    y[size_t(ravel({n, o, oh, ow}, ys))] += xv[size_t(ravel({n, c, ih, iw}, x.shape()))] * wv[size_t(ravel({o, cg, i, j}, w.shape()))];
  });
  return tensor_of(y, ys, out);
}

Sample conv_sample(std::string note, Tensor x, Tensor w, Tensor b, Conv p, DType t, double tol = 1) {
  Tensors in{x, w};
  if (b.defined()) in.push_back(b);
  return {.note = std::move(note),
          .inputs = in,
          .run = [p](const Tensors& in) {
            std::optional<Tensor> bias;
            if (in.size() > 2) bias = in[2];
            return Tensors{conv2d(in[0], in[1], bias, p.stride, p.pad, p.dil, p.groups)};
          },
          .ref = [p, t](const Tensors& in) { return Tensors{ref_conv(in[0], in[1], in.size() > 2 ? in[2] : Tensor(), p, t)}; },
          .tol_scale = tol};
}

OpSpec conv2d_spec() {
  OpSpec s{.op = "conv2d", .dtypes = kF32F64, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        conv_sample("tiny [1,1,3,3] k2 bias", make({1, 1, 3, 3}, t, g), make({2, 1, 2, 2}, t, g), make({2}, t, g), {}, t),
        conv_sample("stride 2 dilation 2 pad (1,0)", make({2, 2, 7, 6}, t, g), make({2, 2, 2, 3}, t, g), Tensor(),
                    {.stride = {2, 2}, .pad = {1, 0}, .dil = {2, 2}}, t),
        conv_sample("groups 2 pad 1", make({1, 4, 5, 5}, t, g), make({4, 2, 3, 3}, t, g), make({4}, t, g),
                    {.pad = {1, 1}, .groups = 2}, t),
        conv_sample("depthwise 3x3", make({1, 8, 6, 6}, t, g), make({8, 1, 3, 3}, t, g), make({8}, t, g),
                    {.pad = {1, 1}, .groups = 8}, t),
        conv_sample("transposed input, stepped weight", transposed({1, 2, 5, 4}, t, g), stepped({3, 2, 3, 3}, t, g),
                    make({3}, t, g), {.pad = {1, 1}}, t),
        conv_sample("[1,8,9,9] x [16,8,3,3] (oneDNN-sized)", make({1, 8, 9, 9}, t, g, -1, 1),
                    make({16, 8, 3, 3}, t, g, -1, 1), make({16}, t, g), {.stride = {1, 1}, .pad = {1, 1}}, t, 4),
        conv_sample("empty batch", make({0, 2, 5, 5}, t, g), make({3, 2, 3, 3}, t, g), Tensor(), {}, t),
        {.note = "conv1d",
         .inputs = {make({2, 2, 7}, t, g), make({3, 2, 3}, t, g)},
         .run = [](const Tensors& in) { return Tensors{conv1d(in[0], in[1], std::nullopt, 2, 1)}; },
         .ref = [t](const Tensors& in) {
           Tensor y = ref_conv(unsqueeze(in[0], 2), unsqueeze(in[1], 2), Tensor(), {.stride = {1, 2}, .pad = {0, 1}}, t);
           return Tensors{squeeze(y, 2)};
         }}};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("3-D input", "conv2d", [] { conv2d(zeros({2, 5, 5}), zeros({3, 2, 3, 3})); }),
        throws_<ShapeError>("channel mismatch", "conv2d", [] { conv2d(zeros({1, 3, 5, 5}), zeros({3, 2, 3, 3})); }),
        throws_<ShapeError>("kernel larger than input", "conv2d", [] { conv2d(zeros({1, 1, 2, 2}), zeros({1, 1, 3, 3})); }),
        throws_<ValueError>("stride 0", "stride", [] { conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}), std::nullopt, {0}); }),
        throws_<TypeError>("mixed dtypes", "conv2d",
                           [] { conv2d(zeros({1, 1, 5, 5}), zeros({1, 1, 3, 3}, DType::Float64)); })};
  };
  return s;
}
SKIFF_OP_SPEC(conv2d_spec());

// conv2d_backward_input(g, w): dx[n, c, ih, iw] = sum of g[n, o, oh, ow] w[o, cg, i, j] over the taps reaching it.
Sample conv_bwd_input_sample(std::string note, Shape xs, Tensor g, Tensor w, Conv p, DType t) {
  return {.note = std::move(note),
          .inputs = {g, w},
          .run = [xs, p](const Tensors& in) {
            return Tensors{conv2d_backward_input(in[0], in[1], xs, p.stride, p.pad, p.dil, p.groups)};
          },
          .ref = [xs, p, t](const Tensors& in) {
            std::vector<double> gv = values(in[0]), wv = values(in[1]), dx(size_t(xs.numel()), 0.0);
            conv_taps(xs, in[1].shape(), in[0].shape(), p, [&](auto n, auto o, auto oh, auto ow, auto c, auto cg, auto i, auto j, auto ih, auto iw) {
              dx[size_t(ravel({n, c, ih, iw}, xs))] +=
                  gv[size_t(ravel({n, o, oh, ow}, in[0].shape()))] * wv[size_t(ravel({o, cg, i, j}, in[1].shape()))];
            });
            return Tensors{tensor_of(dx, xs, t)};
          }};
}

OpSpec conv2d_backward_input_spec() {
  OpSpec s{.op = "conv2d_backward_input", .dtypes = kF32F64, .grad = true, .gradgrad = true, .backward_of = "conv2d"};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        conv_bwd_input_sample("tiny", {1, 1, 3, 3}, make({1, 2, 2, 2}, t, g), make({2, 1, 2, 2}, t, g), {}, t),
        conv_bwd_input_sample("stride 2 pad 1 groups 2", {1, 4, 6, 5}, make({1, 4, 3, 3}, t, g),
                              make({4, 2, 3, 3}, t, g), {.stride = {2, 2}, .pad = {1, 1}, .groups = 2}, t),
        conv_bwd_input_sample("transposed grad, dilation 2", {2, 2, 6, 6}, transposed({2, 3, 2, 2}, t, g),
                              make({3, 2, 3, 3}, t, g), {.dil = {2, 2}}, t),
        conv_bwd_input_sample("[1,16,9,9] (oneDNN-sized)", {1, 8, 9, 9}, make({1, 16, 9, 9}, t, g, -1, 1),
                              make({16, 8, 3, 3}, t, g, -1, 1), {.pad = {1, 1}}, t),
        conv_bwd_input_sample("empty batch", {0, 2, 5, 5}, make({0, 3, 3, 3}, t, g), make({3, 2, 3, 3}, t, g), {}, t)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<ShapeError>("grad_out of the wrong shape", "conv2d_backward_input", [] {
      conv2d_backward_input(zeros({1, 2, 4, 4}), zeros({2, 1, 3, 3}), {1, 1, 5, 5});
    })};
  };
  return s;
}
SKIFF_OP_SPEC(conv2d_backward_input_spec());

Sample conv_bwd_weight_sample(std::string note, Shape ws, Tensor g, Tensor x, Conv p, DType t) {
  return {.note = std::move(note),
          .inputs = {g, x},
          .run = [ws, p](const Tensors& in) {
            return Tensors{conv2d_backward_weight(in[0], in[1], ws, p.stride, p.pad, p.dil, p.groups)};
          },
          .ref = [ws, p, t](const Tensors& in) {
            std::vector<double> gv = values(in[0]), xv = values(in[1]), dw(size_t(ws.numel()), 0.0);
            conv_taps(in[1].shape(), ws, in[0].shape(), p, [&](auto n, auto o, auto oh, auto ow, auto c, auto cg, auto i, auto j, auto ih, auto iw) {
              dw[size_t(ravel({o, cg, i, j}, ws))] +=
                  gv[size_t(ravel({n, o, oh, ow}, in[0].shape()))] * xv[size_t(ravel({n, c, ih, iw}, in[1].shape()))];
            });
            return Tensors{tensor_of(dw, ws, t)};
          }};
}

OpSpec conv2d_backward_weight_spec() {
  OpSpec s{.op = "conv2d_backward_weight", .dtypes = kF32F64, .grad = true, .gradgrad = true, .backward_of = "conv2d"};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        conv_bwd_weight_sample("tiny", {2, 1, 2, 2}, make({1, 2, 2, 2}, t, g), make({1, 1, 3, 3}, t, g), {}, t),
        conv_bwd_weight_sample("stride 2 pad 1 groups 2", {4, 2, 3, 3}, make({1, 4, 3, 3}, t, g),
                               make({1, 4, 6, 5}, t, g), {.stride = {2, 2}, .pad = {1, 1}, .groups = 2}, t),
        conv_bwd_weight_sample("stepped input, dilation 2", {3, 2, 3, 3}, make({2, 3, 2, 2}, t, g),
                               stepped({2, 2, 6, 6}, t, g), {.dil = {2, 2}}, t),
        conv_bwd_weight_sample("[1,8,9,9] (oneDNN-sized)", {16, 8, 3, 3}, make({1, 16, 9, 9}, t, g, -1, 1),
                               make({1, 8, 9, 9}, t, g, -1, 1), {.pad = {1, 1}}, t),
        conv_bwd_weight_sample("empty batch gives zeros", {3, 2, 3, 3}, make({0, 3, 3, 3}, t, g),
                               make({0, 2, 5, 5}, t, g), {}, t)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{throws_<ShapeError>("3-d weight_size", "conv2d_backward_weight", [] {
      conv2d_backward_weight(zeros({1, 2, 3, 3}), zeros({1, 1, 5, 5}), {2, 1, 3});
    })};
  };
  return s;
}
SKIFF_OP_SPEC(conv2d_backward_weight_spec());

// ---- pooling -----------------------------------------------------------------------------

struct Pool {
  V k{2, 2}, s{2, 2}, pad{0, 0}, dil{1, 1};
  bool ceil = false, include_pad = true;
};

int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  double span = double(in + 2 * p - d * (k - 1) - 1) / double(s);
  int64_t out = int64_t(ceil ? std::ceil(span) : std::floor(span)) + 1;
  if (ceil && (out - 1) * s >= in + p) --out;  // a last window may not start in the padding
  return out;
}

// Max pooling: values and the flat h * W + w of each window's first maximum.
Tensors ref_max_pool(const Tensor& x, const Pool& p, DType t) {
  const Shape& xs = x.shape();
  Shape ys{xs[0], xs[1], pool_out(xs[2], p.k[0], p.s[0], p.pad[0], p.dil[0], p.ceil),
           pool_out(xs[3], p.k[1], p.s[1], p.pad[1], p.dil[1], p.ceil)};
  std::vector<double> xv = values(x), y, idx;
  for (int64_t i = 0; i < ys.numel(); ++i) {
    auto o = unravel(i, ys);
    double best = -std::numeric_limits<double>::infinity(), at = -1;
    for (int64_t a = 0; a < p.k[0]; ++a)
      for (int64_t b = 0; b < p.k[1]; ++b) {
        int64_t h = o[2] * p.s[0] - p.pad[0] + a * p.dil[0], w = o[3] * p.s[1] - p.pad[1] + b * p.dil[1];
        if (h < 0 || w < 0 || h >= xs[2] || w >= xs[3]) continue;
        double v = xv[size_t(ravel({o[0], o[1], h, w}, xs))];
        if (v > best) best = v, at = double(h * xs[3] + w);
      }
    y.push_back(best);
    idx.push_back(at);
  }
  return {tensor_of(y, ys, t), tensor_of(idx, ys, DType::Int64)};
}

Tensor ref_avg_pool(const Tensor& x, const Pool& p, DType t) {
  const Shape& xs = x.shape();
  Shape ys{xs[0], xs[1], pool_out(xs[2], p.k[0], p.s[0], p.pad[0], 1, p.ceil),
           pool_out(xs[3], p.k[1], p.s[1], p.pad[1], 1, p.ceil)};
  std::vector<double> xv = values(x), y;
  for (int64_t i = 0; i < ys.numel(); ++i) {
    auto o = unravel(i, ys);
    double acc = 0, real = 0, padded = 0;
    for (int64_t a = 0; a < p.k[0]; ++a)
      for (int64_t b = 0; b < p.k[1]; ++b) {
        int64_t h = o[2] * p.s[0] - p.pad[0] + a, w = o[3] * p.s[1] - p.pad[1] + b;
        // Padding cells inside [-pad, in + pad) count with count_include_pad; beyond, nothing does.
        if (h < -p.pad[0] || w < -p.pad[1] || h >= xs[2] + p.pad[0] || w >= xs[3] + p.pad[1]) continue;
        ++padded;
        if (h < 0 || w < 0 || h >= xs[2] || w >= xs[3]) continue;
        ++real;
        acc += xv[size_t(ravel({o[0], o[1], h, w}, xs))];
      }
    y.push_back(acc / (p.include_pad ? padded : real));
  }
  return tensor_of(y, ys, t);
}

Tensor ref_adaptive(const Tensor& x, V os, DType t) {
  const Shape& xs = x.shape();
  Shape ys{xs[0], xs[1], os[0], os[1]};
  std::vector<double> xv = values(x), y;
  for (int64_t i = 0; i < ys.numel(); ++i) {
    auto o = unravel(i, ys);
    int64_t h0 = o[2] * xs[2] / os[0], h1 = ((o[2] + 1) * xs[2] + os[0] - 1) / os[0];
    int64_t w0 = o[3] * xs[3] / os[1], w1 = ((o[3] + 1) * xs[3] + os[1] - 1) / os[1];
    double acc = 0;
    for (int64_t h = h0; h < h1; ++h)
      for (int64_t w = w0; w < w1; ++w) acc += xv[size_t(ravel({o[0], o[1], h, w}, xs))];
    y.push_back(acc / double((h1 - h0) * (w1 - w0)));
  }
  return tensor_of(y, ys, t);
}

// Pool inputs: tiny (gradcheck), padded/dilated/ceil windows, the row kernels'
// float32 shapes (unpadded floor windows), strided and empty inputs.
struct PoolInput {
  std::string note;
  Tensor x;
  Pool p;
};
std::vector<PoolInput> pool_inputs(DType t, Generator& g, bool dilation) {
  std::vector<PoolInput> v{
      {"tiny [1,1,4,4] k2", make({1, 1, 4, 4}, t, g), {}},
      {"k3 s2 pad 1 ceil", make({2, 3, 7, 8}, t, g), {.k = {3, 3}, .s = {2, 2}, .pad = {1, 1}, .ceil = true}},
      {"k3 s1 (rows kernel)", make({1, 4, 9, 21}, t, g), {.k = {3, 3}, .s = {1, 1}}},
      {"k2 s2 (rows kernel)", make({2, 3, 8, 34}, t, g), {}},
      {"transposed [1,2,6,5] k(2,3) s(1,2)", transposed({1, 2, 6, 5}, t, g), {.k = {2, 3}, .s = {1, 2}}},
      {"empty batch", make({0, 2, 4, 4}, t, g), {}}};
  if (dilation) v.push_back({"dilation 2 pad 1", make({1, 2, 7, 7}, t, g), {.k = {3, 3}, .s = {1, 1}, .pad = {1, 1}, .dil = {2, 2}}});
  return v;
}

Tensors run_max_values(const Tensors& in, const Pool& p) { return {max_pool2d(in[0], p.k, p.s, p.pad, p.dil, p.ceil)}; }
Tensors run_max_indices(const Tensors& in, const Pool& p) {
  MaxPoolResult r = max_pool2d_with_indices(in[0], p.k, p.s, p.pad, p.dil, p.ceil);
  return {r.values, r.indices};
}

std::vector<ErrorCase> pool_errors(const std::string& op, std::function<void(const Tensor&, const Pool&)> f) {
  return {throws_<ShapeError>("3-D input", op, [f] { f(zeros({1, 4, 4}), {}); }),
          throws_<ValueError>("padding over half the kernel", op, [f] { f(zeros({1, 1, 6, 6}), {.pad = {2, 2}}); }),
          throws_<TypeError>("integer input", op, [f] { f(zeros({1, 1, 4, 4}, DType::Int32), {}); })};
}

// max_pool2d: the argmax-recording op (what runs when the input requires grad).
OpSpec max_pool2d_spec() {
  OpSpec s{.op = "max_pool2d", .dtypes = kF32F64, .grad = true, .gradgrad = true};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& in : pool_inputs(t, g, true)) {
      Pool p = in.p;
      v.push_back({.note = in.note, .inputs = {in.x}, .run = [p](const Tensors& x) { return run_max_indices(x, p); },
                   .ref = [p, t](const Tensors& x) { return ref_max_pool(x[0], p, t); }});
    }
    return v;
  };
  s.errors = [] {
    return pool_errors("max_pool2d", [](const Tensor& x, const Pool& p) { max_pool2d_with_indices(x, p.k, p.s, p.pad); });
  };
  return s;
}
SKIFF_OP_SPEC(max_pool2d_spec());

// max_pool2d_values: what inference calls (no argmax).
OpSpec max_pool2d_values_spec() {
  OpSpec s{.op = "max_pool2d_values", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& in : pool_inputs(t, g, true)) {
      Pool p = in.p;
      v.push_back({.note = in.note, .inputs = {in.x}, .run = [p](const Tensors& x) { return run_max_values(x, p); },
                   .ref = [p, t](const Tensors& x) { return Tensors{ref_max_pool(x[0], p, t)[0]}; }});
    }
    return v;
  };
  s.errors = [] {
    return pool_errors("max_pool2d", [](const Tensor& x, const Pool& p) { max_pool2d(x, p.k, p.s, p.pad); });
  };
  return s;
}
SKIFF_OP_SPEC(max_pool2d_values_spec());

// max_pool2d_blocked: each lane of a channel-blocked [N, B, H, W, 16] input pooled on its own,
// i.e. the NCHW reference on the unblocked planes, blocked again. The float32 samples reach the
// oneDNN backend's AVX2 / AVX-512 loops where the CPU has them.
OpSpec max_pool2d_blocked_spec() {
  OpSpec s{.op = "max_pool2d_blocked", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    struct Case {
      std::string note;
      Shape nchw;
      Pool p;
    };
    const std::vector<Case> cases{
        {"k3 s2 pad 1 (a detector's stem) [1,20,13,12]", {1, 20, 13, 12}, {.k = {3, 3}, .s = {2, 2}, .pad = {1, 1}}},
        {"k2 s2 [2,16,6,9]", {2, 16, 6, 9}, {}},
        {"k3 s2 pad 1 ceil [1,5,7,8]", {1, 5, 7, 8}, {.k = {3, 3}, .s = {2, 2}, .pad = {1, 1}, .ceil = true}},
        {"k(2,3) s(1,2) [1,33,5,7]", {1, 33, 5, 7}, {.k = {2, 3}, .s = {1, 2}}},
        {"dilation 2 pad 1 [1,3,7,7]", {1, 3, 7, 7}, {.k = {3, 3}, .s = {1, 1}, .pad = {1, 1}, .dil = {2, 2}}},
        {"empty batch", {0, 4, 4, 4}, {}}};
    for (const Case& c : cases) {
      const Pool p = c.p;
      const int64_t planes = (c.nchw[1] + 15) / 16 * 16;
      v.push_back({.note = c.note,
                   .inputs = {block_channels_ref(make(c.nchw, t, g), t)},
                   .run = [p](const Tensors& in) { return Tensors{max_pool2d_blocked(in[0], p.k, p.s, p.pad, p.dil, p.ceil)}; },
                   .ref = [p, t, planes](const Tensors& in) {
                     return Tensors{block_channels_ref(ref_max_pool(unblock_channels_ref(in[0], planes, t), p, t)[0], t)};
                   },
                   .gradcheck = false});
    }
    Tensor tall = block_channels_ref(make({1, 16, 8, 5}, t, g), t);
    const Pool k2{.k = {2, 2}, .s = {1, 1}};
    v.push_back({.note = "strided rows",
                 .inputs = {slice(tall, 2, 0, 8, 2)},
                 .run = [k2](const Tensors& in) { return Tensors{max_pool2d_blocked(in[0], k2.k, k2.s, k2.pad)}; },
                 .ref = [k2, t](const Tensors& in) {
                   return Tensors{block_channels_ref(ref_max_pool(unblock_channels_ref(in[0], 16, t), k2, t)[0], t)};
                 },
                 .gradcheck = false});
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("NCHW input", "max_pool2d_blocked: expected a channel-blocked input",
                            [] { max_pool2d_blocked(zeros({1, 16, 4, 4}), {2, 2}); }),
        throws_<ValueError>("padding over half the kernel", "max_pool2d_blocked: expected padding at most half",
                            [] { max_pool2d_blocked(zeros({1, 1, 6, 6, 16}), {2, 2}, {2, 2}, {2, 2}); }),
        throws_<ShapeError>("window larger than the input", "max_pool2d_blocked: the window",
                            [] { max_pool2d_blocked(zeros({1, 1, 2, 2, 16}), {3, 3}); }),
        throws_<TypeError>("integer input", "max_pool2d_blocked",
                           [] { max_pool2d_blocked(zeros({1, 1, 4, 4, 16}, DType::Int32), {2, 2}); })};
  };
  return s;
}
SKIFF_OP_SPEC(max_pool2d_blocked_spec());

OpSpec avg_pool2d_spec() {
  // Linear: its second-order check is avg_pool2d_backward's gradcheck.
  OpSpec s{.op = "avg_pool2d", .dtypes = kF32F64, .grad = true};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& in : pool_inputs(t, g, false)) {
      for (bool include : {true, false}) {
        if (!include && in.p.pad[0] == 0) continue;  // without padding both divisors agree
        Pool p = in.p;
        p.include_pad = include;
        v.push_back({.note = in.note + (include ? "" : " exclude pad"),
                     .inputs = {in.x},
                     .run = [p](const Tensors& x) { return Tensors{avg_pool2d(x[0], p.k, p.s, p.pad, p.ceil, p.include_pad)}; },
                     .ref = [p, t](const Tensors& x) { return Tensors{ref_avg_pool(x[0], p, t)}; }});
      }
    }
    return v;
  };
  s.errors = [] {
    return pool_errors("avg_pool2d", [](const Tensor& x, const Pool& p) { avg_pool2d(x, p.k, p.s, p.pad); });
  };
  return s;
}
SKIFF_OP_SPEC(avg_pool2d_spec());

OpSpec adaptive_avg_pool2d_spec() {
  // Linear: its second-order check is adaptive_avg_pool2d_backward's gradcheck.
  OpSpec s{.op = "adaptive_avg_pool2d", .dtypes = kF32F64, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensor x, V os) {
      return Sample{.note = std::move(note), .inputs = {x},
                    .run = [os](const Tensors& in) { return Tensors{adaptive_avg_pool2d(in[0], os)}; },
                    .ref = [os, t](const Tensors& in) { return Tensors{ref_adaptive(in[0], os, t)}; }};
    };
    return std::vector<Sample>{
        sample("tiny [1,1,5,4] -> 2x3 (overlapping cells)", make({1, 1, 5, 4}, t, g), {2, 3}),
        sample("global [2,3,7,9] (rows kernel)", make({2, 3, 7, 9}, t, g), {1, 1}),
        {.note = "global_avg_pool2d of transposed", .inputs = {transposed({1, 4, 5, 6}, t, g)},
         .run = [](const Tensors& in) { return Tensors{global_avg_pool2d(in[0])}; },
         .ref = [t](const Tensors& in) { return Tensors{ref_adaptive(in[0], {1, 1}, t)}; }},
        sample("upsampling 3x3 -> 4x5", make({1, 2, 3, 3}, t, g), {4, 5}),
        sample("empty batch", make({0, 2, 4, 4}, t, g), {2, 2})};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("empty plane", "adaptive_avg_pool2d", [] { adaptive_avg_pool2d(zeros({1, 1, 0, 4}), {1, 1}); }),
        throws_<ShapeError>("3-D input", "adaptive_avg_pool2d", [] { adaptive_avg_pool2d(zeros({1, 4, 4}), {1, 1}); })};
  };
  return s;
}
SKIFF_OP_SPEC(adaptive_avg_pool2d_spec());

// ---- pooling backward ops: samples differentiate the forward with an upstream gradient ----

// d/dx of sum(forward(x) * g), through autograd (which runs the backward op).
// With create_graph the result is differentiable in g: gradchecking it runs the
// backward op's own backward (the second-order check of a linear forward, whose
// gradgradcheck has nothing to differentiate).
Tensors vjp(const std::function<Tensor(const Tensor&)>& forward, const Tensor& x, const Tensor& g) {
  Tensor leaf = x.requires_grad() ? x : detail::contiguous_copy(x).set_requires_grad();
  return autograd::grad({forward(leaf)}, {leaf}, {g}, /*create_graph=*/true);
}

OpSpec max_pool2d_backward_spec() {
  OpSpec s{.op = "max_pool2d_backward", .dtypes = kF32F64, .grad = true, .backward_of = "max_pool2d"};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& in : pool_inputs(t, g, true)) {
      Pool p = in.p;
      Tensor y = ref_max_pool(in.x, p, t)[0];
      v.push_back({.note = in.note,
                   .inputs = {in.x, make(y.shape(), t, g)},
                   .run = [p](const Tensors& x) {
                     return vjp([p](const Tensor& a) { return max_pool2d(a, p.k, p.s, p.pad, p.dil, p.ceil); }, x[0], x[1]);
                   },
                   // The gradient scatters (adds) to each window's first maximum.
                   .ref = [p, t](const Tensors& x) {
                     std::vector<double> idx = values(ref_max_pool(x[0], p, t)[1]), gv = values(x[1]);
                     const Shape& xs = x[0].shape();
                     std::vector<double> dx(size_t(xs.numel()), 0.0);
                     for (size_t i = 0; i < idx.size(); ++i) {
                       auto o = unravel(int64_t(i), x[1].shape());
                       dx[size_t((o[0] * xs[1] + o[1]) * xs[2] * xs[3] + int64_t(idx[i]))] += gv[i];
                     }
                     return Tensors{tensor_of(dx, xs, t)};
                   }});
    }
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(max_pool2d_backward_spec());

// max_pool2d_gather is the backward of max_pool2d_backward: it runs when the
// gradient of max pooling is differentiated w.r.t. its upstream gradient.
OpSpec max_pool2d_gather_spec() {
  OpSpec s{.op = "max_pool2d_gather", .dtypes = kF32F64, .backward_of = "max_pool2d_backward"};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& in : pool_inputs(t, g, true)) {
      Pool p = in.p;
      Tensor y = ref_max_pool(in.x, p, t)[0];
      v.push_back({.note = in.note,
                   .inputs = {in.x, make(y.shape(), t, g), make(in.x.shape(), t, g)},
                   .run = [p](const Tensors& x) {
                     Tensor a = detail::contiguous_copy(x[0]).set_requires_grad();
                     Tensor up = detail::contiguous_copy(x[1]).set_requires_grad();
                     Tensor y = max_pool2d(a, p.k, p.s, p.pad, p.dil, p.ceil);
                     Tensor dx = autograd::grad({y}, {a}, {up}, /*create_graph=*/true)[0];
                     return autograd::grad({dx}, {up}, {x[2]});
                   },
                   // out[n, c, oh, ow] = u[n, c] at the window's first maximum.
                   .ref = [p, t](const Tensors& x) {
                     Tensor idx = ref_max_pool(x[0], p, t)[1];
                     const Shape& xs = x[0].shape();
                     std::vector<double> iv = values(idx), uv = values(x[2]), out;
                     for (size_t i = 0; i < iv.size(); ++i) {
                       auto o = unravel(int64_t(i), idx.shape());
                       out.push_back(uv[size_t((o[0] * xs[1] + o[1]) * xs[2] * xs[3] + int64_t(iv[i]))]);
                     }
                     return Tensors{tensor_of(out, idx.shape(), t)};
                   }});
    }
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(max_pool2d_gather_spec());

// Average pools are linear: their backward is checked against finite differences
// of the forward (exact up to rounding for a linear map).
OpSpec avg_pool2d_backward_spec() {
  OpSpec s{.op = "avg_pool2d_backward", .dtypes = kF32F64, .grad = true, .backward_of = "avg_pool2d"};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (auto& in : pool_inputs(t, g, false)) {
      if (in.x.numel() > 400) continue;  // finite differences cost one forward per element
      Pool p = in.p;
      p.include_pad = in.p.pad[0] == 0;
      auto fwd = [p](const Tensor& a) { return avg_pool2d(a, p.k, p.s, p.pad, p.ceil, p.include_pad); };
      Tensor y = ref_avg_pool(in.x, p, t);
      v.push_back({.note = in.note,
                   .inputs = {in.x, make(y.shape(), t, g)},
                   .run = [fwd](const Tensors& x) { return vjp(fwd, x[0], x[1]); },
                   .ref = [fwd, t](const Tensors& x) {
                     return Tensors{detail::cast(numeric_vjp([fwd](const Tensors& a) { return Tensors{fwd(a[0])}; },
                                                             {x[0]}, 0, x[1]), t)};
                   },
                   .tol_scale = numeric_tol_scale(t)});
    }
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(avg_pool2d_backward_spec());

OpSpec adaptive_avg_pool2d_backward_spec() {
  OpSpec s{.op = "adaptive_avg_pool2d_backward", .dtypes = kF32F64, .grad = true, .backward_of = "adaptive_avg_pool2d"};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t, &g](std::string note, Tensor x, V os) {
      auto fwd = [os](const Tensor& a) { return adaptive_avg_pool2d(a, os); };
      Tensor gout = make({x.size(0), x.size(1), os[0], os[1]}, t, g);
      return Sample{.note = std::move(note), .inputs = {x, gout},
                    .run = [fwd](const Tensors& in) { return vjp(fwd, in[0], in[1]); },
                    .ref = [fwd, t](const Tensors& in) {
                      return Tensors{detail::cast(
                          numeric_vjp([fwd](const Tensors& a) { return Tensors{fwd(a[0])}; }, {in[0]}, 0, in[1]), t)};
                    },
                    .tol_scale = numeric_tol_scale(t)};
    };
    return std::vector<Sample>{sample("[1,2,5,4] -> 2x3", make({1, 2, 5, 4}, t, g), {2, 3}),
                               sample("global, transposed", transposed({1, 2, 3, 4}, t, g), {1, 1}),
                               sample("empty batch", make({0, 2, 4, 4}, t, g), {2, 2})};
  };
  return s;
}
SKIFF_OP_SPEC(adaptive_avg_pool2d_backward_spec());


// ---- fused_conv2d ------------------------------------------------------------------------------
// The convolution's reference (ref_conv) followed by the chain element by element; blocked
// inputs and outputs go through the index-arithmetic layout references.

struct FusedCase {
  std::string note;
  Shape x, w;
  Conv p;
  std::vector<PostStep> chain;
  bool bias = true, src_blocked = false, dst_blocked = false;
  bool strided = false;
};

Sample fused_conv_sample(const FusedCase& fc, DType t, Generator& g) {
  const Tensor x = fc.strided ? transposed(fc.x, t, g, -1, 1) : make(fc.x, t, g, -1, 1);
  Tensors in{fc.src_blocked ? block_channels_ref(x, t) : x, make(fc.w, t, g, -0.5, 0.5)};
  in.push_back(fc.bias ? make({fc.w[0]}, t, g) : Tensor());
  bool with_sum = false;
  for (const PostStep& st : fc.chain) with_sum |= st.kind == PostOpKind::Sum;
  in.push_back(with_sum ? make(conv_out(fc.x, fc.w, fc.p), t, g) : Tensor());
  Tensors inputs;  // the sample's defined inputs; run/ref rebuild the optional slots
  for (const Tensor& v : in)
    if (v.defined()) inputs.push_back(v);
  const bool has_bias = fc.bias;
  FusedConv2dOptions o{.stride = fc.p.stride, .padding = fc.p.pad, .dilation = fc.p.dil, .groups = fc.p.groups,
                       .post_ops = fc.chain, .blocked_output = fc.dst_blocked};
  auto slots = [has_bias, with_sum](const Tensors& v) {
    return std::array<Tensor, 4>{v[0], v[1], has_bias ? v[2] : Tensor(), with_sum ? v.back() : Tensor()};
  };
  const int64_t channels = fc.x[1];
  return {.note = fc.note,
          .inputs = inputs,
          .run = [o, slots](const Tensors& v) {
            auto a = slots(v);
            return Tensors{fused_conv2d(a[0], a[1], a[2], a[3], o)};
          },
          .ref = [fc, t, slots, channels](const Tensors& v) {
            auto a = slots(v);
            const Tensor x = fc.src_blocked ? unblock_channels_ref(a[0], channels, DType::Float64) : a[0];
            const Tensor y = ref_conv(x, a[1], a[2], fc.p, DType::Float64);
            std::vector<double> yv = values(y), rv = a[3].defined() ? values(a[3]) : std::vector<double>(yv.size());
            for (size_t i = 0; i < yv.size(); ++i)
              for (const PostStep& st : fc.chain) yv[i] = post_step(st, yv[i], rv[i]);
            const Tensor out = tensor_of(yv, y.shape(), t);
            return Tensors{fc.dst_blocked ? block_channels_ref(out, t) : out};
          },
          .gradcheck = false,
          .tol_scale = 4};
}

OpSpec fused_conv2d_spec() {
  OpSpec s{.op = "fused_conv2d", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    const std::vector<PostStep> sum_relu{{PostOpKind::Sum}, {PostOpKind::Relu}};
    const std::vector<PostStep> hs{{PostOpKind::HardSwish}};
    const std::vector<PostStep> lin_clip{{PostOpKind::Linear, 0.5f, -0.25f}, {PostOpKind::Clip, -1.f, 2.f}};
    const std::vector<PostStep> swish{{PostOpKind::Swish, 1.5f}, {PostOpKind::LeakyRelu, 0.1f}, {PostOpKind::Logistic}};
    std::vector<FusedCase> cases{
        {"pointwise 20->40, hardswish", {1, 20, 5, 7}, {40, 20, 1, 1}, {}, hs},
        {"depthwise 3x3, sum + relu, blocked in and out", {2, 32, 6, 6}, {32, 1, 3, 3}, {.pad = {1, 1}, .groups = 32},
         sum_relu, true, true, true},
        {"dense 3x3 stride 2, no bias, linear + clip, blocked in", {1, 16, 9, 11}, {24, 16, 3, 3},
         {.stride = {2, 2}, .pad = {1, 1}}, lin_clip, false, true},
        {"3-channel stem, swish chain, blocked out", {1, 3, 8, 8}, {16, 3, 3, 3}, {.stride = {2, 2}, .pad = {1, 1}},
         swish, true, false, true},
        {"grouped, dilation 2", {1, 8, 7, 7}, {8, 4, 3, 3}, {.pad = {2, 2}, .dil = {2, 2}, .groups = 2}, {}},
        {"transposed input", {1, 16, 6, 5}, {16, 16, 1, 1}, {}, hs, true, false, false, true},
        {"empty batch", {0, 16, 4, 4}, {16, 16, 1, 1}, {}, {}}};
    std::vector<Sample> v;
    for (const FusedCase& c : cases) v.push_back(fused_conv_sample(c, t, g));
    return v;
  };
  s.errors = [] {
    const Tensor x = zeros({1, 4, 5, 5}), w = zeros({8, 4, 3, 3});
    FusedConv2dOptions sum{.post_ops = {{PostOpKind::Sum}}};
    return std::vector<ErrorCase>{
        throws_<ValueError>("Sum without a residual", "fused_conv2d: the Sum step needs a residual",
                            [=] { fused_conv2d(x, w, Tensor(), Tensor(), sum); }),
        throws_<ShapeError>("channel mismatch", "fused_conv2d",
                            [=] { fused_conv2d(x, zeros({8, 3, 3, 3}), Tensor(), Tensor(), {}); }),
        throws_<ShapeError>("blocked input of the wrong block count", "channel-blocked input [N, 1, H, W, 16]",
                            [=] { fused_conv2d(zeros({1, 2, 5, 5, 16}), w, Tensor(), Tensor(), {}); }),
        throws_<ShapeError>("residual shape", "fused_conv2d: expected a residual of shape [1, 8, 3, 3]",
                            [=] { fused_conv2d(x, w, Tensor(), zeros({1, 8, 5, 5}), sum); }),
        throws_<TypeError>("float16", "fused_conv2d: expected a float32 or float64 input", [=] {
          fused_conv2d(to(x, DType::Float16), to(w, DType::Float16), Tensor(), Tensor(), {});
        })};
  };
  return s;
}
SKIFF_OP_SPEC(fused_conv2d_spec());

}  // namespace
}  // namespace skiff::spec
