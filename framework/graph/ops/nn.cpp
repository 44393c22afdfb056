// Neural-network ONNX ops: convolutions, normalisation, pooling, matrix
// products, softmax and resizing.
#include <fmt/ranges.h>

#include <cmath>

#include "framework/graph/ops/common.h"
#include "framework/graph/ops/padding.h"
#include "framework/graph/ops/resize.h"
#include "framework/tensor/storage.h"

namespace skiff::graph::ops {
namespace {

/// Spatial padding of a conv/pool node for input x. \throws ValueError for bad pads / auto_pad.
Padding node_padding(const OpContext& c, const Tensor& x, const std::vector<int64_t>& kernel,
                     const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  const size_t n = kernel.size();
  std::string auto_pad = c.node.attr_string("auto_pad", "NOTSET");
  auto pads = c.node.attr_ints("pads", {});
  std::vector<int64_t> in;
  for (size_t i = 0; i < n; ++i) in.push_back(x.size(int64_t(2 + i)));
  auto p = resolve_padding(auto_pad, pads, in, kernel, strides, dilations);
  SKIFF_CHECK(p.has_value(), "{}: auto_pad '{}' with {} 'pads' values: expected NOTSET with {} values, VALID, "
              "SAME_UPPER or SAME_LOWER", c.node.describe(), auto_pad, pads.size(), 2 * n);
  return *p;
}

/// Pads the spatial dims of x explicitly (for asymmetric padding).
Tensor pad_spatial(const Tensor& x, const Padding& p, double value) {
  std::vector<int64_t> torch_pads;
  for (size_t i = p.begin.size(); i-- > 0;) {
    torch_pads.push_back(p.begin[i]);
    torch_pads.push_back(p.end[i]);
  }
  return pad(x, torch_pads, "constant", value);
}

std::vector<Tensor> conv_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& w = c.input(1);
  std::optional<Tensor> bias;
  if (c.has(2)) bias = c.input(2);
  const int64_t spatial = w.dim() - 2;
  SKIFF_CHECK_SHAPE(spatial == 1 || spatial == 2, "{}: only 1-D and 2-D convolutions are supported, weight shape {}",
                    c.node.describe(), w.shape());
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  auto strides = c.node.attr_ints("strides", std::vector<int64_t>(spatial, 1));
  auto dilations = c.node.attr_ints("dilations", std::vector<int64_t>(spatial, 1));
  int64_t group = c.node.attr_int("group", 1);
  Padding p = node_padding(c, x, kernel, strides, dilations);
  Tensor input = x;
  std::vector<int64_t> padding = p.begin;
  if (!p.symmetric()) {
    input = pad_spatial(x, p, 0.0);
    padding.assign(size_t(spatial), 0);
  }
  if (spatial == 1) return one(conv1d(input, w, bias, strides[0], padding[0], dilations[0], group));
  return one(conv2d(input, w, bias, strides, padding, dilations, group));
}

std::vector<Tensor> conv_transpose_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& w = c.input(1);
  std::optional<Tensor> bias;
  if (c.has(2)) bias = c.input(2);
  SKIFF_CHECK_SHAPE(w.dim() == 4, "{}: only 2-D transposed convolutions are supported, weight shape {}",
                    c.node.describe(), w.shape());
  std::vector<int64_t> kernel{w.size(2), w.size(3)};
  auto strides = c.node.attr_ints("strides", {1, 1});
  auto dilations = c.node.attr_ints("dilations", {1, 1});
  auto out_pad = c.node.attr_ints("output_padding", {0, 0});
  int64_t group = c.node.attr_int("group", 1);
  std::vector<int64_t> pb(2, 0), pe(2, 0);
  if (c.node.has_attr("output_shape")) {
    auto shape = c.node.attr_ints("output_shape");
    auto spatial_out = std::vector<int64_t>(shape.end() - 2, shape.end());
    for (int i = 0; i < 2; ++i) {
      int64_t full = strides[i] * (x.size(2 + i) - 1) + out_pad[i] + ((kernel[i] - 1) * dilations[i] + 1);
      int64_t total = full - spatial_out[i];
      SKIFF_CHECK(total >= 0, "{}: output_shape {} is larger than the transposed convolution produces",
                  c.node.describe(), fmt::join(shape, "x"));
      bool upper = c.node.attr_string("auto_pad", "NOTSET") != "SAME_LOWER";
      pb[i] = upper ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    }
  } else {
    auto pads = c.node.attr_ints("pads", {0, 0, 0, 0});
    SKIFF_CHECK(pads.size() == 4, "{}: 'pads' must have 4 values", c.node.describe());
    pb = {pads[0], pads[1]};
    pe = {pads[2], pads[3]};
  }
  if (pb == pe) return one(conv_transpose2d(x, w, bias, strides, pb, out_pad, group, dilations));
  // Asymmetric: compute the unpadded result and crop.
  Tensor full = conv_transpose2d(x, w, bias, strides, {0, 0}, out_pad, group, dilations);
  Tensor cropped = slice(full, 2, pb[0], full.size(2) - pe[0]);
  return one(slice(cropped, 3, pb[1], full.size(3) - pe[1]));
}

std::vector<Tensor> batch_norm_op(const OpContext& c) {
  SKIFF_CHECK(c.node.attr_int("training_mode", 0) == 0, "{}: training_mode=1 is not supported for inference",
              c.node.describe());
  double eps = c.node.attr_float("epsilon", 1e-5f);
  return one(batch_norm(c.input(0), c.input(3), c.input(4), c.input(1), c.input(2), false, 0.1, eps));
}

std::vector<Tensor> instance_norm_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  double eps = c.node.attr_float("epsilon", 1e-5f);
  return one(group_norm(x, x.size(1), c.input(1), c.input(2), eps));
}

std::vector<Tensor> layer_norm_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = axis_of(c, c.node.attr_int("axis", -1), x.dim());
  double eps = c.node.attr_float("epsilon", 1e-5f);
  std::vector<int64_t> normalized(x.shape().begin() + axis, x.shape().end());
  Tensor w = c.has(1) ? reshape(c.input(1), Shape(normalized)) : Tensor();
  Tensor b = c.has(2) ? reshape(c.input(2), Shape(normalized)) : Tensor();
  return one(layer_norm(x, normalized, w, b, eps));
}

std::vector<Tensor> pool_op(const OpContext& c, bool is_max) {
  const Tensor& x = c.input(0);
  SKIFF_CHECK_SHAPE(x.dim() == 4, "{}: only 2-D pooling over [N, C, H, W] is supported, got shape {}",
                    c.node.describe(), x.shape());
  SKIFF_CHECK(c.node.outputs.size() < 2 || c.node.outputs[1].empty(), "{}: the Indices output is not supported",
              c.node.describe());
  auto kernel = c.node.attr_ints("kernel_shape");
  SKIFF_CHECK(kernel.size() == 2, "{}: kernel_shape must have 2 values", c.node.describe());
  auto strides = c.node.attr_ints("strides", {1, 1});
  auto dilations = c.node.attr_ints("dilations", {1, 1});
  bool ceil_mode = c.node.attr_int("ceil_mode", 0) != 0;
  Padding p = node_padding(c, x, kernel, strides, dilations);
  if (is_max) {
    if (!p.symmetric())
      return one(max_pool2d(pad_spatial(x, p, -std::numeric_limits<double>::infinity()), kernel, strides, {0, 0},
                            dilations, ceil_mode));
    return one(max_pool2d(x, kernel, strides, p.begin, dilations, ceil_mode));
  }
  bool include_pad = c.node.attr_int("count_include_pad", 0) != 0;
  SKIFF_CHECK(p.symmetric() || include_pad, "{}: asymmetric padding without count_include_pad is not supported",
              c.node.describe());
  if (!p.symmetric()) return one(avg_pool2d(pad_spatial(x, p, 0.0), kernel, strides, {0, 0}, ceil_mode, true));
  return one(avg_pool2d(x, kernel, strides, p.begin, ceil_mode, include_pad));
}

std::vector<Tensor> max_pool_op(const OpContext& c) { return pool_op(c, true); }
std::vector<Tensor> avg_pool_op(const OpContext& c) { return pool_op(c, false); }

std::vector<Tensor> global_pool(const OpContext& c, bool is_max) {
  const Tensor& x = c.input(0);
  SKIFF_CHECK_SHAPE(x.dim() >= 3, "{}: input must have spatial dims, got shape {}", c.node.describe(), x.shape());
  if (!is_max && x.dim() == 4) return one(global_avg_pool2d(x));
  std::vector<int64_t> dims;
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return one(is_max ? amax(x, dims, true) : mean(x, dims, true));
}
std::vector<Tensor> global_avg_pool_op(const OpContext& c) { return global_pool(c, false); }
std::vector<Tensor> global_max_pool_op(const OpContext& c) { return global_pool(c, true); }

std::vector<Tensor> matmul_op(const OpContext& c) { return one(matmul(c.input(0), c.input(1))); }

std::vector<Tensor> gemm_op(const OpContext& c) {
  Tensor a = c.input(0), b = c.input(1);
  if (c.node.attr_int("transA", 0)) a = t(a);
  if (c.node.attr_int("transB", 0)) b = t(b);
  double alpha = c.node.attr_float("alpha", 1.0f), beta = c.node.attr_float("beta", 1.0f);
  Tensor y = matmul(a, b);
  if (alpha != 1.0) y = mul(y, alpha);
  if (c.has(2)) y = add(y, beta == 1.0 ? c.input(2) : mul(c.input(2), beta));
  return one(y);
}

std::vector<Tensor> softmax_like(const OpContext& c, bool log) {
  const Tensor& x = c.input(0);
  int64_t default_axis = c.opset < 13 ? 1 : -1;
  int64_t axis = axis_of(c, c.node.attr_int("axis", default_axis), x.dim());
  if (c.opset >= 13 || axis == x.dim() - 1) return one(log ? log_softmax(x, axis) : softmax(x, axis));
  // Before opset 13 the input is coerced to 2-D at `axis`.
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.size(d);
  Tensor flat = reshape(x, Shape{outer, outer ? x.numel() / outer : 0});
  Tensor y = log ? log_softmax(flat, 1) : softmax(flat, 1);
  return one(reshape(y, x.shape()));
}
std::vector<Tensor> softmax_op(const OpContext& c) { return softmax_like(c, false); }
std::vector<Tensor> log_softmax_op(const OpContext& c) { return softmax_like(c, true); }

std::vector<Tensor> dropout_op(const OpContext& c) {
  std::vector<Tensor> out{c.input(0)};
  if (c.node.outputs.size() > 1 && !c.node.outputs[1].empty()) out.push_back(ones(c.input(0).shape(), DType::Bool));
  return out;
}

/// Source index of each output position along one axis for nearest resizing.
Tensor nearest_indices(const OpContext& c, int64_t in, int64_t out, double scale) {
  std::string coord = c.node.attr_string("coordinate_transformation_mode", "half_pixel");
  std::string rounding = c.node.attr_string("nearest_mode", "round_prefer_floor");
  std::vector<int64_t> idx(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    double src;
    if (coord == "asymmetric") src = o / scale;
    else if (coord == "align_corners") src = out == 1 ? 0.0 : double(o) * (in - 1) / double(out - 1);
    else if (coord == "half_pixel") src = (o + 0.5) / scale - 0.5;
    else if (coord == "pytorch_half_pixel") src = out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
    else if (coord == "tf_half_pixel_for_nn") src = (o + 0.5) / scale;
    else SKIFF_THROW(NotImplementedError, "{}: coordinate_transformation_mode '{}' is not supported for nearest",
                     c.node.describe(), coord);
    int64_t s;
    if (rounding == "floor") s = int64_t(std::floor(src));
    else if (rounding == "ceil") s = int64_t(std::ceil(src));
    else if (rounding == "round_prefer_ceil") s = int64_t(std::floor(src + 0.5));
    else if (rounding == "round_prefer_floor") s = src - std::floor(src) == 0.5 ? int64_t(std::floor(src)) : int64_t(std::round(src));
    else SKIFF_THROW(ValueError, "{}: unknown nearest_mode '{}'", c.node.describe(), rounding);
    idx[size_t(o)] = std::clamp<int64_t>(s, 0, in - 1);
  }
  return from_vector(idx);
}

std::vector<Tensor> resize_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const int64_t rank = x.dim();
  const ResizeTarget target = resize_target(c, x.shape());
  const std::vector<int64_t>& sizes = target.sizes;
  const std::vector<double>& scales = target.scales;
  for (int64_t d = 0; d < std::min<int64_t>(rank, 2); ++d)
    SKIFF_CHECK(sizes[size_t(d)] == x.size(d), "{}: resizing the batch or channel dim is not supported",
                c.node.describe());
  std::string mode = c.node.attr_string("mode", "nearest");
  if (mode == "nearest") {
    Tensor y = x;
    for (int64_t d = 2; d < rank; ++d) {
      if (sizes[size_t(d)] == x.size(d)) continue;
      y = index_select(y, d, nearest_indices(c, x.size(d), sizes[size_t(d)], scales[size_t(d)]));
    }
    return one(y);
  }
  SKIFF_CHECK(mode == "linear" || mode == "bilinear", "{}: resize mode '{}' is not supported (nearest and linear are)",
              c.node.describe(), mode);
  SKIFF_CHECK(rank == 4 || rank == 3, "{}: linear resize needs a 3-D or 4-D input, got {}", c.node.describe(), x.shape());
  InterpolateOptions opt;
  opt.mode = rank == 4 ? "bilinear" : "linear";
  opt.size.assign(sizes.begin() + 2, sizes.end());
  opt.align_corners = linear_align_corners(c);
  return one(interpolate(x, opt));
}

}  // namespace

ResizeTarget resize_target(const OpContext& c, const Shape& x) {
  const int64_t rank = x.size();
  ResizeTarget t;
  // Inputs: opset 10 (X, scales); opset 11+ (X, roi, scales, sizes). Upsample (7-9): attr or input scales.
  if (c.node.op_type == "Upsample" && c.opset < 9) {
    for (float s : c.node.attr_floats("scales")) t.scales.push_back(s);
  } else {
    size_t scales_at = (c.node.op_type == "Upsample" || c.opset < 11) ? 1 : 2;
    if (c.has(scales_at) && c.input(scales_at).numel() > 0)
      t.scales = to(c.input(scales_at), DType::Float64).to_vector<double>();
    if (c.opset >= 11 && c.has(3) && c.input(3).numel() > 0) t.sizes = c.ints(3);
  }
  SKIFF_CHECK(!t.scales.empty() || !t.sizes.empty(), "{}: neither scales nor sizes is given", c.node.describe());
  if (t.sizes.empty()) {
    SKIFF_CHECK(int64_t(t.scales.size()) == rank, "{}: {} scales for a rank-{} input", c.node.describe(),
                t.scales.size(), rank);
    for (int64_t d = 0; d < rank; ++d) {
      const double size = std::floor(double(x[d]) * t.scales[size_t(d)]);
      // Scales come from the model file: NaN, negative or astronomically large ones are refused
      // here rather than converted to a garbage size.
      SKIFF_CHECK(t.scales[size_t(d)] > 0 && size < 0x1p62, "{}: scale {} of dim {} gives no usable size",
                  c.node.describe(), t.scales[size_t(d)], d);
      t.sizes.push_back(int64_t(size));
    }
  } else {
    SKIFF_CHECK(int64_t(t.sizes.size()) == rank, "{}: {} sizes for a rank-{} input", c.node.describe(),
                t.sizes.size(), rank);
    t.scales.clear();
    for (int64_t d = 0; d < rank; ++d) t.scales.push_back(double(t.sizes[size_t(d)]) / double(x[d]));
  }
  // Per-axis index tables (int64 per output position) are built before the output is
  // allocated: refuse what the tensor limit would refuse (a scale of 5e17 from a corrupt
  // file) before building them, the tables included, since an empty output (a zero-size
  // dim) still builds the table of every other axis.
  int64_t bytes = c.input(0).itemsize();
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t size = t.sizes[size_t(d)];
    SKIFF_CHECK(size >= 0, "{}: output size {} of dim {} is negative", c.node.describe(), size, d);
    const bool fits = size <= max_tensor_bytes() / int64_t(sizeof(int64_t)) &&
                      !__builtin_mul_overflow(bytes, size, &bytes) && bytes <= max_tensor_bytes();
    SKIFF_CHECK_T(DeviceError, fits,
                  "{}: the output [{}] is larger than the {}-byte tensor limit (SKIFF_MAX_TENSOR_BYTES)",
                  c.node.describe(), fmt::join(t.sizes, ", "), max_tensor_bytes());
  }
  return t;
}

bool linear_align_corners(const OpContext& c) {
  const std::string coord = c.node.attr_string("coordinate_transformation_mode",
                                               c.node.op_type == "Upsample" ? "asymmetric" : "half_pixel");
  if (coord == "align_corners") return true;
  SKIFF_CHECK(coord == "half_pixel" || coord == "pytorch_half_pixel",
              "{}: coordinate_transformation_mode '{}' is not supported for linear resizing", c.node.describe(), coord);
  return false;
}

namespace {

SKIFF_REGISTER_GRAPH_OP("Conv", conv_op);
SKIFF_REGISTER_GRAPH_OP("ConvTranspose", conv_transpose_op);
SKIFF_REGISTER_GRAPH_OP("BatchNormalization", batch_norm_op);
SKIFF_REGISTER_GRAPH_OP("InstanceNormalization", instance_norm_op);
SKIFF_REGISTER_GRAPH_OP("LayerNormalization", layer_norm_op);
SKIFF_REGISTER_GRAPH_OP("MaxPool", max_pool_op);
SKIFF_REGISTER_GRAPH_OP("AveragePool", avg_pool_op);
SKIFF_REGISTER_GRAPH_OP("GlobalAveragePool", global_avg_pool_op);
SKIFF_REGISTER_GRAPH_OP("GlobalMaxPool", global_max_pool_op);
SKIFF_REGISTER_GRAPH_OP("MatMul", matmul_op);
SKIFF_REGISTER_GRAPH_OP("Gemm", gemm_op);
SKIFF_REGISTER_GRAPH_OP("Softmax", softmax_op);
SKIFF_REGISTER_GRAPH_OP("LogSoftmax", log_softmax_op);
SKIFF_REGISTER_GRAPH_OP("Dropout", dropout_op);
SKIFF_REGISTER_GRAPH_OP("Resize", resize_op);
SKIFF_REGISTER_GRAPH_OP("Upsample", resize_op);

}  // namespace
}  // namespace skiff::graph::ops
