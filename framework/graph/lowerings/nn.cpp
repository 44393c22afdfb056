// ONNX lowerings of the neural-network ops (framework/ops/nn/): convolution,
// pooling, normalization, softmax, padding and resizing.
#include "framework/graph/lowering.h"

namespace skiff::graph {
namespace {

/// A 2-D attr given as {v} or {h, w}, as {h, w}.
std::vector<int64_t> attr_pair(const Attrs& a, const char* key) {
  const auto& v = a.get_ints(key);
  return v.size() == 1 ? std::vector<int64_t>{v[0], v[0]} : v;
}

/// ONNX pads [top, left, bottom, right] from a symmetric {h, w} padding attr.
std::vector<int64_t> pads_2d(const Attrs& a) {
  auto pad = attr_pair(a, "padding");
  return {pad[0], pad[1], pad[0], pad[1]};
}

/// The flags of an [N, C, H, W] result: only N can follow the batch.
DimFlags batch_dim_only(const LoweringContext& c) { return {c.flags(0)[0], kStatic, kStatic, kStatic}; }

/// Torch-style pads (pairs from the last dim backwards) -> ONNX [begins..., ends...].
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& pairs, int64_t rank) {
  std::vector<int64_t> out(size_t(2 * rank), 0);
  for (size_t i = 0; i < pairs.size() / 2; ++i) {
    int64_t d = rank - 1 - int64_t(i);
    out[size_t(d)] = pairs[2 * i];
    out[size_t(d + rank)] = pairs[2 * i + 1];
  }
  return out;
}

void lower_conv2d(LoweringContext& c) {
  const Attrs& a = c.attrs();
  const Tensor& w = c.input(1);
  c.set_output(0,
               c.node("Conv", c.values(),
                      {{"kernel_shape", std::vector<int64_t>{w.size(2), w.size(3)}},
                       {"strides", attr_pair(a, "stride")},
                       {"pads", pads_2d(a)},
                       {"dilations", attr_pair(a, "dilation")},
                       {"group", a.get_int("groups")}}),
               batch_dim_only(c));
}

/// The attributes MaxPool and AveragePool share.
std::map<std::string, AttrValue> pool_attrs(const Attrs& a) {
  return {{"kernel_shape", attr_pair(a, "kernel")},
          {"strides", attr_pair(a, "stride")},
          {"pads", pads_2d(a)},
          {"ceil_mode", int64_t(a.get_bool("ceil_mode"))}};
}

void lower_max_pool2d(LoweringContext& c) {
  auto at = pool_attrs(c.attrs());
  at["dilations"] = attr_pair(c.attrs(), "dilation");
  c.set_output(0, c.node("MaxPool", {c.value(0)}, at), batch_dim_only(c));
  if (c.outputs().size() > 1) c.set_unavailable(1, "the indices of max_pool2d have no ONNX lowering");
}

void lower_avg_pool2d(LoweringContext& c) {
  auto at = pool_attrs(c.attrs());
  at["count_include_pad"] = int64_t(c.attrs().get_bool("count_include_pad", true));
  c.set_output(0, c.node("AveragePool", {c.value(0)}, at), batch_dim_only(c));
}

/// GlobalAveragePool to 1 x 1, otherwise an AveragePool when the windows are even.
void lower_adaptive_avg_pool2d(LoweringContext& c) {
  auto size = attr_pair(c.attrs(), "output_size");
  const Tensor& x = c.input(0);
  int64_t h = x.size(2), w = x.size(3);
  std::string out;
  if (size[0] == 1 && size[1] == 1) {
    out = c.node("GlobalAveragePool", {c.value(0)}, {});
  } else {
    SKIFF_CHECK_T(NotImplementedError, h % size[0] == 0 && w % size[1] == 0,
                  "trace: adaptive_avg_pool2d from {}x{} to {}x{} has uneven windows, which ONNX cannot express", h,
                  w, size[0], size[1]);
    std::vector<int64_t> k{h / size[0], w / size[1]};
    out = c.node("AveragePool", {c.value(0)}, {{"kernel_shape", k}, {"strides", k}});
  }
  c.set_output(0, out, batch_dim_only(c));
}

/// LayerNormalization (which needs a scale: ones when there is no weight).
void lower_layer_norm(LoweringContext& c) {
  const Attrs& a = c.attrs();
  const Tensor& x = c.input(0);
  int64_t axis = a.get_int("axis");
  std::vector<std::string> args{c.value(0)};
  size_t next = 1;
  if (a.get_bool("has_weight", true)) {
    args.push_back(c.value(next++));
  } else {
    Shape s(std::vector<int64_t>(x.shape().begin() + axis, x.shape().end()));
    args.push_back(c.constant(ones(s, x.dtype())));
  }
  if (a.get_bool("has_bias", true)) args.push_back(c.value(next++));
  c.set_output(0, c.node("LayerNormalization", args, {{"axis", axis}, {"epsilon", float(a.get_float("eps"))}}),
               c.flags(0));
  for (size_t i = 1; i < c.outputs().size(); ++i) c.set_unavailable(i, "the statistics outputs of layer_norm are not traced");
}

LoweringFn softmax(std::string onnx_type) {
  return [onnx_type](LoweringContext& c) {
    c.set_output(0, c.node(onnx_type, {c.value(0)}, {{"axis", c.attrs().get_int("dim")}}), c.flags(0));
  };
}

void lower_constant_pad(LoweringContext& c) {
  const Tensor& x = c.input(0);
  auto pads = onnx_pads(c.attrs().get_ints("pads"), x.dim());
  c.set_output(0,
               c.node("Pad", {c.value(0), c.const_ints(pads), c.const_scalar(c.attrs().get_float("value"), x.dtype())},
                      {{"mode", std::string("constant")}}),
               c.flags(0));
}

/// reflect / replicate (ONNX "edge") padding.
void lower_pad(LoweringContext& c) {
  auto pads = onnx_pads(c.attrs().get_ints("pads"), c.input(0).dim());
  const std::string& mode = c.attrs().get_string("mode");
  c.set_output(0,
               c.node("Pad", {c.value(0), c.const_ints(pads)},
                      {{"mode", std::string(mode == "replicate" ? "edge" : mode)}}),
               c.flags(0));
}

/// Resize by the scales in_size -> out_size of the two spatial dims, with the
/// coordinate mapping skiff's interpolate uses.
void lower_interpolate(LoweringContext& c) {
  const Attrs& a = c.attrs();
  const auto& in_size = a.get_ints("in_size");
  const auto& out_size = a.get_ints("out_size");
  std::vector<float> scales{1.0f, 1.0f};
  for (size_t d = 0; d < 2; ++d) scales.push_back(float(double(out_size[d]) / double(in_size[d])));
  bool linear = a.get_string("mode") == "linear";
  std::map<std::string, AttrValue> at{{"mode", std::string(linear ? "linear" : "nearest")}};
  if (linear) {
    at["coordinate_transformation_mode"] = std::string(a.get_bool("align_corners") ? "align_corners" : "half_pixel");
  } else {
    at["coordinate_transformation_mode"] = std::string("asymmetric");
    at["nearest_mode"] = std::string("floor");
  }
  c.set_output(0, c.node("Resize", {c.value(0), "", c.constant(from_vector(scales))}, at), c.flags(0));
}

/// pixel_shuffle as Reshape -> Transpose -> Reshape (a 0 keeps the batch dim, which may be
/// dynamic); DepthToSpace would cover square factors only.
void lower_pixel_shuffle(LoweringContext& c) {
  const int64_t rh = c.attrs().get_int("rh"), rw = c.attrs().get_int("rw");
  const Shape& x = c.input(0).shape();
  const int64_t ch = x[1] / (rh * rw), h = x[2], w = x[3];
  std::string blocks = c.node("Reshape", {c.value(0), c.const_ints({0, ch, rh, rw, h, w})}, {});
  std::string placed = c.node("Transpose", {blocks}, {{"perm", std::vector<int64_t>{0, 1, 4, 2, 5, 3}}});
  DimFlags flags{c.flags(0)[0], kStatic, kStatic, kStatic};
  c.set_output(0, c.node("Reshape", {placed, c.const_ints({0, ch, h * rh, w * rw})}, {}), flags);
}

}  // namespace

SKIFF_REGISTER_LOWERING(conv2d, lower_conv2d);
SKIFF_REGISTER_LOWERING(pixel_shuffle, lower_pixel_shuffle);
SKIFF_REGISTER_LOWERING(max_pool2d, lower_max_pool2d);
SKIFF_REGISTER_LOWERING(max_pool2d_values, lower_max_pool2d);
SKIFF_REGISTER_LOWERING(avg_pool2d, lower_avg_pool2d);
SKIFF_REGISTER_LOWERING(adaptive_avg_pool2d, lower_adaptive_avg_pool2d);
SKIFF_REGISTER_LOWERING(layer_norm, lower_layer_norm);
SKIFF_REGISTER_LOWERING(softmax, softmax("Softmax"));
SKIFF_REGISTER_LOWERING(log_softmax, softmax("LogSoftmax"));
SKIFF_REGISTER_LOWERING(constant_pad, lower_constant_pad);
SKIFF_REGISTER_LOWERING(pad, lower_pad);
SKIFF_REGISTER_LOWERING(interpolate, lower_interpolate);

// Eval-mode batch_norm and dropout are composites that trace as their primitives
// (or as nothing); the ops themselves only run in training mode.
SKIFF_NOT_EXPORTABLE(batch_norm,
                     "batch_norm with batch statistics (training mode, or no running statistics) has no ONNX "
                     "lowering; call eval() on the module before tracing");
SKIFF_NOT_EXPORTABLE(dropout, "dropout in training mode has no ONNX lowering; call eval() on the module before tracing");

SKIFF_NOT_EXPORTABLE(conv2d_backward_input, "'conv2d_backward_input' is a gradient of conv2d; export traces inference");
SKIFF_NOT_EXPORTABLE(batch_norm_backward, "'batch_norm_backward' is the gradient of batch_norm; export traces inference");
SKIFF_NOT_EXPORTABLE(conv2d_backward_weight, "'conv2d_backward_weight' is a gradient of conv2d; export traces inference");
SKIFF_NOT_EXPORTABLE(max_pool2d_backward, "'max_pool2d_backward' is the gradient of max_pool2d; export traces inference");
SKIFF_NOT_EXPORTABLE(max_pool2d_gather,
                     "'max_pool2d_gather' is the gradient of max_pool2d_backward; export traces inference");
SKIFF_NOT_EXPORTABLE(avg_pool2d_backward, "'avg_pool2d_backward' is the gradient of avg_pool2d; export traces inference");
SKIFF_NOT_EXPORTABLE(adaptive_avg_pool2d_backward,
                     "'adaptive_avg_pool2d_backward' is the gradient of adaptive_avg_pool2d; export traces inference");
SKIFF_NOT_EXPORTABLE(interpolate_backward,
                     "'interpolate_backward' is the gradient of interpolate; export traces inference");
SKIFF_NOT_EXPORTABLE(pad_backward, "'pad_backward' is the gradient of pad; export traces inference");


// The fused inference ops (framework/ops/nn/fused.h) exist only inside optimised graphs, which the
// fusion passes build from exportable nodes; eager code does not call them.
SKIFF_NOT_EXPORTABLE(fused_conv2d, "'fused_conv2d' is built by the graph fusion passes; export the unfused model");
SKIFF_NOT_EXPORTABLE(eltwise_chain, "'eltwise_chain' is built by the graph fusion passes; export the unfused model");
SKIFF_NOT_EXPORTABLE(unblock_channels,
                     "'unblock_channels' converts a oneDNN channel-blocked layout, which ONNX has no notion of");
SKIFF_NOT_EXPORTABLE(channel_mul, "'channel_mul' is built by the graph fusion passes; export the unfused model");
SKIFF_NOT_EXPORTABLE(upsample_nearest2d,
                     "'upsample_nearest2d' is built by the graph fusion passes; export the unfused model");
SKIFF_NOT_EXPORTABLE(max_pool2d_blocked,
                     "'max_pool2d_blocked' works on a oneDNN channel-blocked layout, which ONNX has no notion of");
SKIFF_NOT_EXPORTABLE(resize_bilinear_blocked,
                     "'resize_bilinear_blocked' works on a oneDNN channel-blocked layout, which ONNX has no notion of");

}  // namespace skiff::graph
