#pragma once
/// \file conv_params.h
/// Geometry of 2-D convolutions and pooling windows, read from op attributes. Shared by the
/// op definitions (framework/ops/nn/conv.cpp, pool.cpp) and the kernels of every backend, so the
/// output-size rule lives in one place. Internal: not part of the public API.

#include <cstdint>
#include <vector>

#include "framework/ops/op.h"

namespace skiff::nn_detail {

/// Expands a per-dim parameter given as {v} or {v_h, v_w} to two values, checking v >= min_value.
/// \throws ValueError naming `op` and `what` otherwise.
inline std::vector<int64_t> pair_param(const char* op, const char* what, const std::vector<int64_t>& v,
                                       int64_t min_value) {
  SKIFF_CHECK(v.size() == 1 || v.size() == 2, "{}: expected {} as 1 or 2 values, got {}", op, what, v.size());
  std::vector<int64_t> r{v[0], v.size() == 2 ? v[1] : v[0]};
  SKIFF_CHECK(r[0] >= min_value && r[1] >= min_value, "{}: expected {} >= {}, got [{}, {}]", op, what, min_value,
              r[0], r[1]);
  return r;
}

/// Output length of a sliding window (floor mode).
/// A result <= 0 means the window does not fit.
inline int64_t conv_out_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

/// One 2-D convolution: input [n, c, h, w], weight [o, c / groups, kh, kw], output [n, o, oh, ow].
/// Attributes: "stride", "padding", "dilation" (two values each) and "groups".
struct Conv2dParams {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t o = 0, kh = 0, kw = 0;
  int64_t oh = 0, ow = 0;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;

  static Conv2dParams from(const Shape& input, const Shape& weight, const Attrs& a) {
    Conv2dParams p;
    p.n = input[0], p.c = input[1], p.h = input[2], p.w = input[3];
    p.o = weight[0], p.kh = weight[2], p.kw = weight[3];
    const auto &s = a.get_ints("stride"), &pad = a.get_ints("padding"), &d = a.get_ints("dilation");
    p.sh = s[0], p.sw = s[1], p.ph = pad[0], p.pw = pad[1], p.dh = d[0], p.dw = d[1];
    p.groups = a.get_int("groups");
    p.oh = conv_out_size(p.h, p.kh, p.sh, p.ph, p.dh);
    p.ow = conv_out_size(p.w, p.kw, p.sw, p.pw, p.dw);
    return p;
  }
  int64_t c_per_group() const { return c / groups; }
  int64_t o_per_group() const { return o / groups; }
  bool is_depthwise() const { return groups == c && groups == o; }
  Shape input_shape() const { return {n, c, h, w}; }
  Shape weight_shape() const { return {o, c / groups, kh, kw}; }
  Shape output_shape() const { return {n, o, oh, ow}; }
};

/// One 2-D pooling: input [n, c, h, w] -> [n, c, oh, ow]. Attributes: "kernel", "stride",
/// "padding", "dilation" (two values each), "ceil_mode", and for average pooling "count_include_pad".
struct Pool2dParams {
  int64_t n = 0, c = 0, h = 0, w = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t oh = 0, ow = 0;
  bool ceil_mode = false, count_include_pad = true;

  /// PyTorch's rule: round up in ceil mode, but the last window must start inside the input or
  /// the left padding.
  static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
    int64_t span = in + 2 * p - d * (k - 1) - 1;
    if (span < 0) return 0;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + p) --out;
    return out;
  }

  static Pool2dParams from(const Shape& input, const Attrs& a) {
    Pool2dParams p;
    p.n = input[0], p.c = input[1], p.h = input[2], p.w = input[3];
    const auto &k = a.get_ints("kernel"), &s = a.get_ints("stride"), &pad = a.get_ints("padding");
    p.kh = k[0], p.kw = k[1], p.sh = s[0], p.sw = s[1], p.ph = pad[0], p.pw = pad[1];
    if (a.has("dilation")) p.dh = a.get_ints("dilation")[0], p.dw = a.get_ints("dilation")[1];
    p.ceil_mode = a.get_bool("ceil_mode", false);
    p.count_include_pad = a.get_bool("count_include_pad", true);
    p.oh = out_size(p.h, p.kh, p.sh, p.ph, p.dh, p.ceil_mode);
    p.ow = out_size(p.w, p.kw, p.sw, p.pw, p.dw, p.ceil_mode);
    return p;
  }
  Shape input_shape() const { return {n, c, h, w}; }
  Shape output_shape() const { return {n, c, oh, ow}; }
};

/// Adaptive pooling window [start, end) of output cell i when `in` is split into `out` cells.
inline int64_t adaptive_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
inline int64_t adaptive_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

}  // namespace skiff::nn_detail
