// Specs of padding, interpolation and pixel_shuffle. References are index maps
// (which source element each output reads) and PyTorch's interpolation formulas
// written out in float64; the backward ops are checked against finite differences.
#include <algorithm>
#include <cmath>

#include "framework/autograd/engine.h"
#include "framework/ops/ops.h"
#include "tests/framework/ops/specs/op_spec.h"
#include "tests/framework/ops/specs/reference.h"

namespace skiff::spec {
namespace {

using V = std::vector<int64_t>;
const std::vector<DType> kAll = kFloats + kInts + kComplex + std::vector<DType>{DType::Bool};

// The padded tensor: trailing dims padded by pads (PyTorch order), each out-of-range
// index mapped by mode (reflect / replicate) or filled with value (constant).
Tensor ref_pad(const Tensor& x, const V& pads, const std::string& mode, double value, DType t) {
  Shape os = x.shape();
  const int64_t nd = x.dim();
  for (size_t i = 0; i < pads.size() / 2; ++i) os[size_t(nd - 1 - int64_t(i))] += pads[2 * i] + pads[2 * i + 1];
  Tensor m = index_map(x, os, [&](const V& o) {
    V i = o;
    for (size_t k = 0; k < pads.size() / 2; ++k) {
      size_t d = size_t(nd - 1 - int64_t(k));
      int64_t n = x.shape()[d], s = o[d] - pads[2 * k];
      if (mode == "reflect") s = s < 0 ? -s : s >= n ? 2 * (n - 1) - s : s;
      if (mode == "replicate") s = std::clamp<int64_t>(s, 0, n - 1);
      if (s < 0 || s >= n) return int64_t(-1);
      i[d] = s;
    }
    return ravel(i, x.shape());
  }, t);
  if (mode != "constant" || value == 0) return m;
  std::vector<std::complex<double>> mv = cvalues(m);
  if (!is_complex(t)) {
    std::vector<double> re = values(m);
    for (size_t k = 0; k < re.size(); ++k) mv[k] = re[k];
  }
  // Constant fill: mark the padding positions with a mask map of ones.
  Tensor inside = index_map(ones(x.shape(), DType::Float64), os, [&](const V& o) {
    V i = o;
    for (size_t k = 0; k < pads.size() / 2; ++k) {
      size_t d = size_t(nd - 1 - int64_t(k));
      int64_t s = o[d] - pads[2 * k];
      if (s < 0 || s >= x.shape()[d]) return int64_t(-1);
      i[d] = s;
    }
    return ravel(i, x.shape());
  }, DType::Float64);
  std::vector<double> iv = values(inside);
  for (size_t k = 0; k < mv.size(); ++k)
    if (iv[k] == 0) mv[k] = value;
  return tensor_of(mv, os, t);
}

Sample pad_sample(std::string note, Tensor x, V pads, std::string mode, double value, DType t) {
  return {.note = std::move(note), .inputs = {x},
          .run = [pads, mode, value](const Tensors& in) { return Tensors{pad(in[0], pads, mode, value)}; },
          .ref = [pads, mode, value, t](const Tensors& in) { return Tensors{ref_pad(in[0], pads, mode, value, t)}; }};
}

OpSpec constant_pad_spec() {
  OpSpec s{.op = "constant_pad", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        pad_sample("[2,3] (1,2)", make({2, 3}, t, g), {1, 2}, "constant", 0, t),
        pad_sample("[2,3,4] (1,0,0,2) value 1", make({2, 3, 4}, t, g), {1, 0, 0, 2}, "constant", 1, t),
        pad_sample("transposed, crop and grow (-1,2)", transposed({3, 4}, t, g), {-1, 2}, "constant", 0, t),
        pad_sample("empty [0,2]", make({0, 2}, t, g), {1, 1}, "constant", 0, t)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("odd pads", "pad", [] { pad(zeros({2, 3}), {1}); }),
        throws_<ValueError>("crop past the dim", "pad", [] { pad(zeros({2, 3}), {-2, -2}); }),
        throws_<ValueError>("unknown mode", "pad", [] { pad(zeros({2, 3}), {1, 1}, "circular"); })};
  };
  return s;
}
SKIFF_OP_SPEC(constant_pad_spec());

OpSpec pad_spec() {
  // Linear: its second-order check is pad_backward's gradcheck.
  OpSpec s{.op = "pad", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        pad_sample("reflect [2,5] (2,3)", make({2, 5}, t, g), {2, 3}, "reflect", 0, t),
        pad_sample("replicate [2,3,4] (1,2,2,1)", make({2, 3, 4}, t, g), {1, 2, 2, 1}, "replicate", 0, t),
        pad_sample("reflect transposed (1,1,1,1)", transposed({3, 4}, t, g), {1, 1, 1, 1}, "reflect", 0, t),
        pad_sample("replicate empty batch", make({0, 3}, t, g), {1, 1}, "replicate", 0, t)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ValueError>("reflect pad >= size", "reflect", [] { pad(zeros({2, 3}), {3, 0}, "reflect"); }),
        throws_<ValueError>("negative replicate pad", "replicate", [] { pad(zeros({2, 3}), {-1, 0}, "replicate"); }),
        throws_<ValueError>("replicate an empty dim", "replicate", [] { pad(zeros({2, 0}), {1, 0}, "replicate"); })};
  };
  return s;
}
SKIFF_OP_SPEC(pad_spec());

// d/dx of sum(forward(x) * g) through autograd (runs the backward op) ...
Tensors vjp(const std::function<Tensor(const Tensor&)>& forward, const Tensor& x, const Tensor& g) {
  Tensor leaf = x.requires_grad() ? x : detail::contiguous_copy(x).set_requires_grad();
  return autograd::grad({forward(leaf)}, {leaf}, {g}, /*create_graph=*/true);  // differentiable in g
}
// ... and by finite differences of the forward.
Tensors numeric(const std::function<Tensor(const Tensor&)>& forward, const Tensor& x, const Tensor& g, DType t) {
  return {detail::cast(numeric_vjp([forward](const Tensors& a) { return Tensors{forward(a[0])}; }, {x}, 0, g), t)};
}

Sample backward_sample(std::string note, Tensor x, Tensor g, std::function<Tensor(const Tensor&)> fwd, DType t) {
  return {.note = std::move(note), .inputs = {x, g},
          .run = [fwd](const Tensors& in) { return vjp(fwd, in[0], in[1]); },
          .ref = [fwd, t](const Tensors& in) { return numeric(fwd, in[0], in[1], t); },
          .tol_scale = numeric_tol_scale(t)};
}

OpSpec pad_backward_spec() {
  OpSpec s{.op = "pad_backward", .dtypes = kFloats, .grad = true, .backward_of = "pad"};
  s.samples = [](DType t, Generator& g) {
    return std::vector<Sample>{
        backward_sample("reflect [2,5] (2,3)", make({2, 5}, t, g), transposed({2, 10}, t, g),
                        [](const Tensor& x) { return pad(x, {2, 3}, "reflect"); }, t),
        backward_sample("replicate [2,3,4] (1,2,2,1)", make({2, 3, 4}, t, g), make({2, 6, 7}, t, g),
                        [](const Tensor& x) { return pad(x, {1, 2, 2, 1}, "replicate"); }, t),
        backward_sample("replicate empty batch", make({0, 3}, t, g), make({0, 5}, t, g),
                        [](const Tensor& x) { return pad(x, {1, 1}, "replicate"); }, t)};
  };
  return s;
}
SKIFF_OP_SPEC(pad_backward_spec());

// ---- interpolate -------------------------------------------------------------------------

// Source taps of one output index along a dim: (i0, i1, weight of i1).
struct Tap {
  int64_t i0, i1;
  double l;
};
Tap tap(int64_t d, int64_t in, int64_t out, const std::string& mode, bool align, double scale) {
  if (mode == "nearest") {
    double s = scale > 0 ? 1 / scale : double(in) / double(out);
    int64_t src = std::min(int64_t(std::floor(double(d) * s)), in - 1);
    return {src, src, 0};
  }
  double s = align ? (out > 1 ? double(in - 1) / double(out - 1) : 0) : scale > 0 ? 1 / scale : double(in) / double(out);
  double src = align ? s * double(d) : std::max(s * (double(d) + 0.5) - 0.5, 0.0);
  int64_t i0 = std::min(int64_t(std::floor(src)), in - 1);
  return {i0, i0 + (i0 < in - 1 ? 1 : 0), std::clamp(src - double(i0), 0.0, 1.0)};
}

Tensor ref_interpolate(const Tensor& x, const InterpolateOptions& o, DType t) {
  const Shape& xs = x.shape();
  const bool two_d = x.dim() == 4;
  V out = o.size;
  if (out.empty())
    for (size_t k = 0; k < (two_d ? 2u : 1u); ++k)
      out.push_back(int64_t(std::floor(double(xs[2 + k]) * o.scale_factor[std::min(k, o.scale_factor.size() - 1)])));
  double sh = o.scale_factor.empty() ? 0 : o.scale_factor[0], sw = o.scale_factor.empty() ? 0 : o.scale_factor.back();
  Shape os = two_d ? Shape{xs[0], xs[1], out[0], out[1]} : Shape{xs[0], xs[1], out[0]};
  std::vector<double> xv = values(x), y;
  for (int64_t i = 0; i < os.numel(); ++i) {
    auto idx = unravel(i, os);
    Tap th = two_d ? tap(idx[2], xs[2], out[0], o.mode, o.align_corners, sh) : Tap{0, 0, 0};
    Tap tw = tap(idx[two_d ? 3 : 2], xs[two_d ? 3 : 2], out[two_d ? 1 : 0], o.mode, o.align_corners, sw);
    auto at = [&](int64_t h, int64_t w) {
      return xv[size_t(two_d ? ravel({idx[0], idx[1], h, w}, xs) : ravel({idx[0], idx[1], w}, xs))];
    };
    y.push_back((1 - th.l) * ((1 - tw.l) * at(th.i0, tw.i0) + tw.l * at(th.i0, tw.i1)) +
                th.l * ((1 - tw.l) * at(th.i1, tw.i0) + tw.l * at(th.i1, tw.i1)));
  }
  return tensor_of(y, os, t);
}

Sample interp_sample(std::string note, Tensor x, InterpolateOptions o, DType t) {
  return {.note = std::move(note), .inputs = {x},
          .run = [o](const Tensors& in) { return Tensors{interpolate(in[0], o)}; },
          .ref = [o, t](const Tensors& in) { return Tensors{ref_interpolate(in[0], o, t)}; }};
}

// Ratios in/out that float32 represents exactly (0.75, 1.25, 2), so float32 index
// arithmetic and the float64 reference pick the same nearest neighbours.
std::vector<Sample> interp_samples(DType t, Generator& g) {
  return {interp_sample("nearest [1,2,3,5] -> [4,4]", make({1, 2, 3, 5}, t, g), {.size = {4, 4}}, t),
          interp_sample("nearest x2 (scale)", make({1, 1, 3, 4}, t, g), {.scale_factor = {2.0}}, t),
          interp_sample("bilinear [1,2,3,4] -> [5,7]", make({1, 2, 3, 4}, t, g), {.size = {5, 7}, .mode = "bilinear"}, t),
          interp_sample("bilinear align_corners -> [2,6]", make({2, 1, 4, 3}, t, g),
                        {.size = {2, 6}, .mode = "bilinear", .align_corners = true}, t),
          interp_sample("bilinear transposed, scale 2", transposed({1, 2, 3, 4}, t, g),
                        {.scale_factor = {2.0}, .mode = "bilinear"}, t),
          interp_sample("linear [2,2,5] -> [8]", make({2, 2, 5}, t, g), {.size = {8}, .mode = "linear"}, t),
          interp_sample("nearest empty batch", make({0, 2, 3, 3}, t, g), {.size = {4, 4}}, t)};
}

OpSpec interpolate_spec() {
  // Linear in x: its second-order check is interpolate_backward's gradcheck.
  OpSpec s{.op = "interpolate", .dtypes = kFloats, .samples = interp_samples, .grad = true};
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("2-D input", "interpolate", [] { interpolate(zeros({3, 3}), {.size = {4}}); }),
        throws_<ValueError>("both size and scale", "interpolate",
                            [] { interpolate(zeros({1, 1, 3, 3}), {.size = {4, 4}, .scale_factor = {2.0}}); }),
        throws_<ValueError>("unknown mode", "interpolate",
                            [] { interpolate(zeros({1, 1, 3, 3}), {.size = {4, 4}, .mode = "bicubic"}); }),
        throws_<ValueError>("align_corners with nearest", "align_corners",
                            [] { interpolate(zeros({1, 1, 3, 3}), {.size = {4, 4}, .align_corners = true}); }),
        throws_<TypeError>("integer input", "interpolate",
                           [] { interpolate(zeros({1, 1, 3, 3}, DType::Int32), {.size = {4, 4}}); })};
  };
  return s;
}
SKIFF_OP_SPEC(interpolate_spec());

// resize_bilinear_blocked: interpolate's bilinear reference on the unblocked planes, blocked again.
OpSpec resize_bilinear_blocked_spec() {
  OpSpec s{.op = "resize_bilinear_blocked", .dtypes = kF32F64};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    struct Case {
      std::string note;
      Tensor x;  // blocked
      int64_t planes, oh, ow;
      bool align;
    };
    Tensor tall = block_channels_ref(make({1, 16, 8, 5}, t, g), t);
    const std::vector<Case> cases{
        {"x2 [1,20,4,5] -> [8,10]", block_channels_ref(make({1, 20, 4, 5}, t, g), t), 32, 8, 10, false},
        {"x0.5 [2,16,8,6] -> [4,3]", block_channels_ref(make({2, 16, 8, 6}, t, g), t), 16, 4, 3, false},
        {"align_corners [1,3,3,4] -> [5,7]", block_channels_ref(make({1, 3, 3, 4}, t, g), t), 16, 5, 7, true},
        {"strided rows -> [6,6]", slice(tall, 2, 0, 8, 2), 16, 6, 6, false},
        {"empty batch", block_channels_ref(make({0, 4, 3, 3}, t, g), t), 16, 6, 6, false}};
    for (const Case& c : cases) {
      const int64_t oh = c.oh, ow = c.ow, planes = c.planes;
      const bool align = c.align;
      v.push_back({.note = c.note,
                   .inputs = {c.x},
                   .run = [oh, ow, align](const Tensors& in) { return Tensors{resize_bilinear_blocked(in[0], oh, ow, align)}; },
                   .ref = [oh, ow, align, planes, t](const Tensors& in) {
                     const InterpolateOptions o{.size = {oh, ow}, .mode = "bilinear", .align_corners = align};
                     return Tensors{block_channels_ref(ref_interpolate(unblock_channels_ref(in[0], planes, t), o, t), t)};
                   },
                   .gradcheck = false});
    }
    return v;
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("NCHW input", "resize_bilinear_blocked: expected a channel-blocked input",
                            [] { resize_bilinear_blocked(zeros({1, 16, 4, 4}), 8, 8, false); }),
        throws_<ValueError>("zero size", "resize_bilinear_blocked: expected two positive output sizes",
                            [] { resize_bilinear_blocked(zeros({1, 1, 4, 4, 16}), 0, 8, false); }),
        throws_<TypeError>("integer input", "resize_bilinear_blocked",
                           [] { resize_bilinear_blocked(zeros({1, 1, 4, 4, 16}, DType::Int32), 8, 8, false); })};
  };
  return s;
}
SKIFF_OP_SPEC(resize_bilinear_blocked_spec());

OpSpec interpolate_backward_spec() {
  OpSpec s{.op = "interpolate_backward", .dtypes = kFloats, .grad = true, .backward_of = "interpolate"};
  s.samples = [](DType t, Generator& g) {
    std::vector<Sample> v;
    for (Sample& f : interp_samples(t, g)) {
      Tensor x = f.inputs[0];
      Tensor y = f.ref(f.inputs)[0];
      RunFn run = f.run;
      v.push_back(backward_sample(f.note, x, make(y.shape(), t, g),
                                  [run](const Tensor& a) { return run({a})[0]; }, t));
    }
    return v;
  };
  return s;
}
SKIFF_OP_SPEC(interpolate_backward_spec());

// pixel_shuffle: out[n, c, h*rh + i, w*rw + j] = in[n, (c*rh + i)*rw + j, h, w].
OpSpec pixel_shuffle_spec() {
  OpSpec s{.op = "pixel_shuffle", .dtypes = kAll, .grad = true};
  s.samples = [](DType t, Generator& g) {
    auto sample = [t](std::string note, Tensor x, int64_t rh, int64_t rw) {
      return Sample{.note = std::move(note), .inputs = {x},
                    .run = [rh, rw](const Tensors& in) { return Tensors{pixel_shuffle(in[0], rh, rw)}; },
                    .ref = [rh, rw, t](const Tensors& in) {
                      const Shape& xs = in[0].shape();
                      Shape os{xs[0], xs[1] / (rh * rw), xs[2] * rh, xs[3] * rw};
                      return Tensors{index_map(in[0], os, [&](const V& o) {
                        int64_t i = o[2] % rh, j = o[3] % rw;
                        return ravel({o[0], (o[1] * rh + i) * rw + j, o[2] / rh, o[3] / rw}, xs);
                      }, t)};
                    }};
    };
    return std::vector<Sample>{sample("[1,8,2,3] r2", make({1, 8, 2, 3}, t, g), 2, 2),
                               sample("[2,6,2,2] (3,2)", make({2, 6, 2, 2}, t, g), 3, 2),
                               sample("transposed", transposed({1, 4, 3, 2}, t, g), 2, 2),
                               sample("empty batch", make({0, 4, 2, 2}, t, g), 2, 2)};
  };
  s.errors = [] {
    return std::vector<ErrorCase>{
        throws_<ShapeError>("channels not divisible", "pixel_shuffle", [] { pixel_shuffle(zeros({1, 6, 2, 2}), 2, 2); }),
        throws_<ValueError>("factor 0", "pixel_shuffle", [] { pixel_shuffle(zeros({1, 4, 2, 2}), 0, 2); }),
        throws_<ShapeError>("3-D input", "pixel_shuffle", [] { pixel_shuffle(zeros({4, 2, 2}), 2, 2); })};
  };
  return s;
}
SKIFF_OP_SPEC(pixel_shuffle_spec());

}  // namespace
}  // namespace skiff::spec
