// Fused graph ops produced by the fusion passes (framework/graph/fusion.h): each reads its node
// (ONNX-style attributes and padding) and runs the matching fused op of framework/ops/nn/fused.h,
// whose kernels (reference and fast) live in the backends; what the op cannot express (padding
// that differs between the two sides, integer tensors) runs as the unfused graph nodes would.
//
//   skiff.FusedConv   inputs {x, W, B or "", residual (only with a "sum" step)}; the Conv attributes
//                     plus the post-op chain: "post_ops" (strings), "post_alpha", "post_beta" (floats),
//                     and "dst_blocked" (select_blocked_layouts) -> fused_conv2d.
//   skiff.Eltwise     inputs {x}; the post-op chain (no "sum") -> eltwise_chain.
//   skiff.ChannelMul  inputs {x, s}; y = x * s, plus x when attribute "residual" is 1 -> channel_mul.
//   skiff.ChannelConcat  a Concat along axis 1 whose inputs may be channel-blocked (attributes
//                     "channels", "dst_blocked"); see use_channel_blocked_ops.
//   skiff.ChannelBlocked  a MaxPool, Resize, Add or Shape node (attribute "inner") whose data
//                     inputs may be channel-blocked (attributes "channels", "dst_blocked").
//   skiff.UpsampleNearest  a Resize node (same inputs and attributes) plus an optional residual
//                     input 4 added to the result -> upsample_nearest2d for integer factors.
//   skiff.LayerNorm   inputs {x, gamma or "", beta or ""}, attribute epsilon: normalisation over the
//                     last axis (fuse_layer_norm) -> layer_norm.
//
// FusedConv and Eltwise parse their attributes in a prepare hook (once per Predictor step) and
// fall back to parsing the node when run without it.
//
// Chain steps: relu, leaky_relu (alpha), clip (alpha = lo, beta = hi), hardswish, linear
// (alpha * x + beta), sigmoid, swish (x * sigmoid(alpha * x)), sum (+ residual).
#include "framework/graph/ops/fused.h"

#include <cmath>
#include <memory>
#include <optional>

#include "framework/graph/ops/common.h"
#include "framework/graph/ops/padding.h"
#include "framework/graph/ops/resize.h"
#include "framework/ops/nn/conv_params.h"

namespace skiff::graph {

namespace {

PostOpKind kind_of(const std::string& name, const Node& node) {
  if (name == "relu") return PostOpKind::Relu;
  if (name == "leaky_relu") return PostOpKind::LeakyRelu;
  if (name == "clip") return PostOpKind::Clip;
  if (name == "hardswish") return PostOpKind::HardSwish;
  if (name == "linear") return PostOpKind::Linear;
  if (name == "sigmoid") return PostOpKind::Logistic;
  if (name == "swish") return PostOpKind::Swish;
  if (name == "sum") return PostOpKind::Sum;
  SKIFF_THROW(ValueError, "{}: unknown post-op '{}'", node.describe(), name);
}

}  // namespace

std::vector<PostOp> post_ops_of(const Node& node) {
  auto names = node.has_attr("post_ops") ? std::get<std::vector<std::string>>(node.attrs.at("post_ops"))
                                         : std::vector<std::string>{};
  auto alpha = node.attr_floats("post_alpha"), beta = node.attr_floats("post_beta");
  SKIFF_CHECK(alpha.size() == names.size() && beta.size() == names.size(),
              "{}: post_ops, post_alpha and post_beta must have the same length", node.describe());
  std::vector<PostOp> ops;
  for (size_t i = 0; i < names.size(); ++i) ops.push_back({names[i], alpha[i], beta[i]});
  return ops;
}

void set_post_ops(Node& node, const std::vector<PostOp>& ops) {
  std::vector<std::string> names;
  std::vector<float> alpha, beta;
  for (const auto& op : ops) {
    names.push_back(op.name);
    alpha.push_back(op.alpha);
    beta.push_back(op.beta);
  }
  node.attrs["post_ops"] = names;
  node.attrs["post_alpha"] = alpha;
  node.attrs["post_beta"] = beta;
}

std::vector<PostStep> post_steps_of(const Node& node) {
  std::vector<PostStep> steps;
  for (const PostOp& op : post_ops_of(node)) steps.push_back({kind_of(op.name, node), op.alpha, op.beta});
  return steps;
}

size_t channel_blocked_data_inputs(const std::string& inner) {
  return inner == "Add" ? 2 : 1;
}

namespace ops {
namespace {

/// The dtypes the fused ops take; others (float16, integers) run as the unfused nodes.
bool fused_dtype(DType t) { return t == DType::Float32 || t == DType::Float64; }

bool all_fused_dtypes(const OpContext& c) {
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has(i) && !fused_dtype(c.inputs[i].dtype())) return false;
  return true;
}

/// The chain with skiff ops on any tensor (integer ones included), as the unfused nodes ran it.
Tensor apply_chain(Tensor y, const std::vector<PostStep>& chain, const Tensor& residual) {
  for (const PostStep& s : chain) y = nn_detail::apply_post_step(s, y, residual);
  return y;
}

/// What skiff.FusedConv reads from its node, parsed once (prepare hook) or per call.
struct ConvPrep {
  FusedConv2dOptions options;
  bool geometry_ok = false;     // 2-D strides and dilations
  bool static_padding = false;  // explicit symmetric pads: options.padding holds them
};

ConvPrep make_conv_prep(const Node& node) {
  ConvPrep p;
  p.options.post_ops = post_steps_of(node);
  p.options.groups = node.attr_int("group", 1);
  p.options.stride = node.attr_ints("strides", {1, 1});
  p.options.dilation = node.attr_ints("dilations", {1, 1});
  p.options.blocked_output = node.attr_int("dst_blocked", 0) != 0;
  p.geometry_ok = p.options.stride.size() == 2 && p.options.dilation.size() == 2;
  if (node.attr_string("auto_pad", "NOTSET") == "NOTSET") {
    auto pads = node.attr_ints("pads", std::vector<int64_t>(4, 0));
    if (pads.size() == 4 && pads[0] == pads[2] && pads[1] == pads[3]) {
      p.static_padding = true;
      p.options.padding = {pads[0], pads[1]};
    }
  }
  return p;
}

std::shared_ptr<const void> prepare_fused_conv(const Node& node, int64_t) {
  return std::make_shared<const ConvPrep>(make_conv_prep(node));
}

std::shared_ptr<const void> prepare_eltwise(const Node& node, int64_t) {
  return std::make_shared<const std::vector<PostStep>>(post_steps_of(node));
}

/// The node as the Conv graph op plus the chain, on NCHW values: for what fused_conv2d cannot
/// express (asymmetric or input-dependent padding it cannot resolve, integer tensors).
std::vector<Tensor> fused_conv_unfused(const OpContext& c, const std::vector<PostStep>& chain, int64_t in_channels) {
  const GraphOp* conv = find_graph_op("Conv");
  SKIFF_ASSERT(conv != nullptr, "the Conv graph op is not registered");
  Tensor x = c.input(0);
  if (x.dim() == 5) x = unblock_channels(x, in_channels);
  std::vector<Tensor> conv_inputs{x, c.input(1), c.has(2) ? c.inputs[2] : Tensor()};
  Tensor y = conv->run(OpContext{c.node, conv_inputs, c.opset})[0];
  Tensor residual = c.has(3) ? c.inputs[3] : Tensor();
  if (residual.defined() && residual.dim() == 5) residual = unblock_channels(contiguous(residual), y.size(1));
  return one(apply_chain(y, chain, residual));
}

std::vector<Tensor> fused_conv_op(const OpContext& c) {
  ConvPrep local;
  const ConvPrep* prep = static_cast<const ConvPrep*>(c.prepared);
  if (!prep) {
    local = make_conv_prep(c.node);
    prep = &local;
  }
  const Tensor& x = c.input(0);
  const Tensor& w = c.input(1);
  const int64_t in_channels = w.dim() == 4 ? w.size(1) * prep->options.groups : 0;
  if (!prep->geometry_ok || !all_fused_dtypes(c) || w.dim() != 4 || (x.dim() != 4 && x.dim() != 5))
    return fused_conv_unfused(c, prep->options.post_ops, in_channels);
  // Padding that depends on the input size (auto_pad SAME_*) is resolved per call.
  std::optional<FusedConv2dOptions> dynamic;
  if (!prep->static_padding) {
    const int64_t h = x.size(2), wd = x.size(3);  // the same dims in NCHW and blocked values
    auto p = resolve_padding(c.node.attr_string("auto_pad", "NOTSET"), c.node.attr_ints("pads", {}), {h, wd},
                             {w.size(2), w.size(3)}, prep->options.stride, prep->options.dilation);
    if (!p || !p->symmetric()) return fused_conv_unfused(c, prep->options.post_ops, in_channels);
    dynamic = prep->options;
    dynamic->padding = p->begin;
  }
  // A residual that broadcasts, or arguments of mixed dtypes, are the unfused nodes' business.
  const FusedConv2dOptions& o = dynamic ? *dynamic : prep->options;
  const Shape out{x.size(0), w.size(0), nn_detail::conv_out_size(x.size(2), w.size(2), o.stride[0], o.padding[0], o.dilation[0]),
                  nn_detail::conv_out_size(x.size(3), w.size(3), o.stride[1], o.padding[1], o.dilation[1])};
  for (size_t i = 1; i < c.num_inputs(); ++i)
    if (c.has(i) && c.inputs[i].dtype() != x.dtype()) return fused_conv_unfused(c, o.post_ops, in_channels);
  // A blocked residual (select_blocked_layouts) holds out's channels in whole blocks.
  const Shape blocked_out{out[0], (out[1] + kChannelBlock - 1) / kChannelBlock, out[2], out[3], kChannelBlock};
  if (c.has(3) && c.inputs[3].shape() != (c.inputs[3].dim() == 5 ? blocked_out : out))
    return fused_conv_unfused(c, o.post_ops, in_channels);
  // Contiguous arguments let the fast kernels take the call (they decline strided ones).
  auto contig = [](const Tensor& t) { return t.defined() ? contiguous(t) : t; };
  return one(fused_conv2d(contig(x), contig(w), c.has(2) ? contig(c.inputs[2]) : Tensor(),
                          c.has(3) ? contig(c.inputs[3]) : Tensor(), o));
}

/// skiff.ChannelConcat (use_channel_blocked_ops): Concat along the channels of [N, C_i, H, W] inputs,
/// each NCHW or blocked ([N, C_i / 16, H, W, 16], C_i from attribute "channels"). Since every C_i
/// is a whole number of blocks, the blocked result is the inputs' blocks one after the other, a
/// plain concat along dim 1 of the 5-D tensors; it is produced when every input is blocked and the
/// node may hand a blocked value on (dst_blocked). Otherwise the inputs are made NCHW and joined by
/// the Concat op.
std::vector<Tensor> channel_concat_op(const OpContext& c) {
  const std::vector<int64_t> channels = c.node.attr_ints("channels");
  SKIFF_CHECK(channels.size() == c.num_inputs(), "{}: {} inputs but {} channel counts", c.node.describe(),
              c.num_inputs(), channels.size());
  bool all_blocked = true;
  for (size_t i = 0; i < c.num_inputs(); ++i) all_blocked &= c.inputs[i].dim() == 5;
  if (all_blocked && c.node.attr_int("dst_blocked", 0) != 0) return one(concat(c.inputs, 1));
  std::vector<Tensor> plain = c.inputs;
  for (size_t i = 0; i < plain.size(); ++i)
    if (plain[i].dim() == 5) plain[i] = unblock_channels(contiguous(plain[i]), channels[i]);
  const GraphOp* concat_op = find_graph_op("Concat");
  SKIFF_ASSERT(concat_op != nullptr, "the Concat graph op is not registered");
  return concat_op->run(OpContext{c.node, plain, c.opset});
}

/// skiff.ChannelBlocked (use_channel_blocked_ops): a MaxPool, Resize, Add or Shape node whose data
/// inputs (input 0; both for Add) may be channel-blocked [N, ceil(C / 16), H, W, 16] values,
/// C = attribute "channels". Attribute "inner" holds the node's own op type, which runs the node
/// on NCHW values. Shape reports a blocked input's NCHW shape. On blocked inputs, MaxPool with
/// symmetric padding, bilinear Resize of H and W, and Add of two same-shaped values run on the
/// blocked layout (max_pool2d_blocked, resize_bilinear_blocked, add: the zero channels stay
/// zero), handing a blocked result on when dst_blocked; anything else makes the inputs NCHW and
/// runs the inner op.
struct ChannelBlockedPrep {
  Node inner;  // the node as its own op type, for the NCHW path and messages
  const GraphOp* op = nullptr;
};

std::shared_ptr<const void> prepare_channel_blocked(const Node& node, int64_t) {
  auto prep = std::make_shared<ChannelBlockedPrep>();
  prep->inner = node;
  prep->inner.op_type = node.attr_string("inner", "");
  prep->op = find_graph_op(prep->inner.op_type);
  SKIFF_CHECK(prep->op != nullptr && prep->inner.op_type.rfind("skiff.", 0) != 0,
              "{}: attribute 'inner' must name an ONNX op skiff runs, got '{}'", node.describe(), prep->inner.op_type);
  return prep;
}

/// The result of the node on the blocked layout, or an undefined tensor when it cannot run there.
Tensor run_on_blocked(const OpContext& c, const Node& inner, int64_t channels) {
  const Tensor& x = c.input(0);
  if (!fused_dtype(x.dtype())) return Tensor();
  const std::string& op = inner.op_type;
  const OpContext ic{inner, c.inputs, c.opset};
  if (op == "Add") {
    const Tensor& y = c.input(1);
    if (y.dim() != 5 || y.shape() != x.shape() || y.dtype() != x.dtype()) return Tensor();
    return add(x, y);
  }
  if (op == "MaxPool") {
    if (inner.outputs.size() > 1 && !inner.outputs[1].empty()) return Tensor();  // Indices: NCHW positions
    const auto kernel = inner.attr_ints("kernel_shape");
    const auto strides = inner.attr_ints("strides", {1, 1}), dilations = inner.attr_ints("dilations", {1, 1});
    if (kernel.size() != 2 || strides.size() != 2 || dilations.size() != 2) return Tensor();
    auto p = resolve_padding(inner.attr_string("auto_pad", "NOTSET"), inner.attr_ints("pads", {}),
                             {x.size(2), x.size(3)}, kernel, strides, dilations);
    if (!p || !p->symmetric() || p->begin[0] > kernel[0] / 2 || p->begin[1] > kernel[1] / 2) return Tensor();
    return max_pool2d_blocked(x, kernel, strides, p->begin, dilations, inner.attr_int("ceil_mode", 0) != 0);
  }
  if (op == "Resize" || op == "Upsample") {
    const std::string mode = inner.attr_string("mode", "nearest");
    if (mode != "linear" && mode != "bilinear") return Tensor();
    const ResizeTarget t = resize_target(ic, {x.size(0), channels, x.size(2), x.size(3)});
    if (t.sizes[0] != x.size(0) || t.sizes[1] != channels) return Tensor();  // the NCHW path says why
    return resize_bilinear_blocked(x, t.sizes[2], t.sizes[3], linear_align_corners(ic));
  }
  return Tensor();
}

std::vector<Tensor> channel_blocked_op(const OpContext& c) {
  std::shared_ptr<const void> local;
  if (!c.prepared) local = prepare_channel_blocked(c.node, c.opset);
  const auto& prep = *static_cast<const ChannelBlockedPrep*>(c.prepared ? c.prepared : local.get());
  const int64_t channels = c.node.attr_int("channels", 0);
  const size_t data = std::min(channel_blocked_data_inputs(prep.inner.op_type), c.num_inputs());
  bool all_blocked = true, any_blocked = false;
  for (size_t i = 0; i < data; ++i) {
    const bool b = c.has(i) && c.inputs[i].dim() == 5;
    all_blocked &= b;
    any_blocked |= b;
  }
  if (prep.inner.op_type == "Shape" && all_blocked) {
    const Tensor& x = c.input(0);  // a view of the NCHW shape with no data behind it
    const Tensor logical = expand(zeros({}, x.dtype()), {x.size(0), channels, x.size(2), x.size(3)});
    return prep.op->run(OpContext{prep.inner, {logical}, c.opset});
  }
  if (all_blocked) {
    if (Tensor y = run_on_blocked(c, prep.inner, channels); y.defined())
      return one(c.node.attr_int("dst_blocked", 0) != 0 ? y : unblock_channels(contiguous(y), channels));
  }
  if (!any_blocked) return prep.op->run(OpContext{prep.inner, c.inputs, c.opset});
  std::vector<Tensor> plain = c.inputs;
  for (size_t i = 0; i < data; ++i)
    if (plain[i].defined() && plain[i].dim() == 5) plain[i] = unblock_channels(contiguous(plain[i]), channels);
  return prep.op->run(OpContext{prep.inner, plain, c.opset});
}

std::vector<Tensor> eltwise_op(const OpContext& c) {
  std::vector<PostStep> local;
  const auto* chain = static_cast<const std::vector<PostStep>*>(c.prepared);
  if (!chain) {
    local = post_steps_of(c.node);
    chain = &local;
  }
  const Tensor& x = c.input(0);
  if (!fused_dtype(x.dtype())) return one(apply_chain(x, *chain, Tensor()));
  return one(eltwise_chain(contiguous(x), *chain));
}

std::vector<Tensor> channel_mul_op(const OpContext& c) {
  const Tensor& a = c.input(0);
  const Tensor& b = c.input(1);
  const bool residual = c.node.attr_int("residual", 0) != 0;
  // Which input is the [N or 1, C, 1, 1] scale.
  auto is_scale_for = [](const Tensor& s, const Tensor& x) {
    return x.dim() == 4 && s.dim() == 4 && (s.size(0) == x.size(0) || s.size(0) == 1) && s.size(1) == x.size(1) &&
           s.size(2) == 1 && s.size(3) == 1;
  };
  const bool as_op = all_fused_dtypes(c) && a.dtype() == b.dtype() && (is_scale_for(b, a) || (!residual && is_scale_for(a, b)));
  if (!as_op) {
    Tensor m = mul(a, b);
    return one(residual ? add(a, m) : m);
  }
  const bool b_scales = is_scale_for(b, a);
  return one(channel_mul(b_scales ? a : b, b_scales ? b : a, residual));
}

/// Integer nearest-upsampling factors (fh, fw) of a Resize node for input x, or {0, 0} when the
/// node is not an exact integer nearest upsampling of H and W with floor(o / f) source indices.
std::pair<int64_t, int64_t> nearest_factors(const OpContext& c, const Tensor& x) {
  const Node& n = c.node;
  if (c.opset < 11 || x.dim() != 4 || n.attr_string("mode", "nearest") != "nearest") return {0, 0};
  const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = n.attr_string("nearest_mode", "round_prefer_floor");
  // asymmetric + floor: src = floor(o / f) exactly; other modes are left to the Resize op.
  if (coord != "asymmetric" || rounding != "floor") return {0, 0};
  std::vector<int64_t> sizes;
  if (c.has(2) && c.inputs[2].numel() > 0) {
    auto scales = to(c.inputs[2], DType::Float64).to_vector<double>();
    if (scales.size() != 4) return {0, 0};
    for (int64_t d = 0; d < 4; ++d) sizes.push_back(int64_t(std::floor(double(x.size(d)) * scales[size_t(d)])));
  } else if (c.has(3) && c.inputs[3].numel() > 0) {
    sizes = c.ints(3);
  }
  if (sizes.size() != 4 || sizes[0] != x.size(0) || sizes[1] != x.size(1) || x.size(2) == 0 || x.size(3) == 0)
    return {0, 0};
  if (sizes[2] % x.size(2) != 0 || sizes[3] % x.size(3) != 0) return {0, 0};
  return {sizes[2] / x.size(2), sizes[3] / x.size(3)};
}

/// Resize (nearest, integer factors) optionally followed by + residual (input 4).
std::vector<Tensor> upsample_nearest_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const bool with_residual = c.has(4);
  auto [fh, fw] = nearest_factors(c, x);
  const bool as_op = fh > 0 && fw > 0 && fused_dtype(x.dtype()) &&
                     (!with_residual || (c.inputs[4].dtype() == x.dtype() &&
                                         c.inputs[4].shape() == Shape{x.size(0), x.size(1), x.size(2) * fh,
                                                                      x.size(3) * fw}));
  if (!as_op) {
    const GraphOp* resize = find_graph_op("Resize");
    std::vector<Tensor> args(c.inputs.begin(), c.inputs.begin() + std::min<size_t>(c.num_inputs(), 4));
    Tensor y = resize->run(OpContext{c.node, args, c.opset})[0];
    return one(with_residual ? add(c.inputs[4], y) : y);
  }
  return one(upsample_nearest2d(x, fh, fw, with_residual ? c.inputs[4] : Tensor()));
}

/// y = (x - mean) / sqrt(var + eps) * gamma + beta over the last axis (biased variance), as the
/// ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add nodes it replaces compute it; gamma and beta are optional
/// and may hold one value for the whole axis.
std::vector<Tensor> layer_norm_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const Tensor gamma = c.has(1) ? c.inputs[1] : Tensor(), beta = c.has(2) ? c.inputs[2] : Tensor();
  const double eps = c.node.attr_float("epsilon", 1e-5f);
  const int64_t n = x.dim() > 0 ? x.size(-1) : 0;
  // A parameter layer_norm takes as [n]: x's dtype, n or 1 values, no dims that widen the result.
  auto op_param = [&](const Tensor& p) {
    return !p.defined() || (p.dtype() == x.dtype() && p.dim() <= x.dim() && (p.numel() == n || p.numel() == 1));
  };
  if (!is_floating(x.dtype()) || n == 0 || !op_param(gamma) || !op_param(beta)) {
    Tensor mu = mean(x, {-1}, true);
    Tensor d = sub(x, mu);
    Tensor y = div(d, sqrt(add(mean(mul(d, d), {-1}, true), eps)));
    if (gamma.defined()) y = mul(y, gamma);
    if (beta.defined()) y = add(y, beta);
    return one(y);
  }
  auto as_row = [&](const Tensor& p) { return p.defined() ? expand(reshape(p, {p.numel()}), {n}) : p; };
  return one(layer_norm(x, {n}, as_row(gamma), as_row(beta), eps));
}

SKIFF_REGISTER_GRAPH_OP("skiff.LayerNorm", layer_norm_op);
SKIFF_REGISTER_GRAPH_OP("skiff.UpsampleNearest", upsample_nearest_op);
SKIFF_REGISTER_GRAPH_OP("skiff.FusedConv", fused_conv_op, prepare_fused_conv);
SKIFF_REGISTER_GRAPH_OP("skiff.Eltwise", eltwise_op, prepare_eltwise);
SKIFF_REGISTER_GRAPH_OP("skiff.ChannelMul", channel_mul_op);
SKIFF_REGISTER_GRAPH_OP("skiff.ChannelConcat", channel_concat_op);
SKIFF_REGISTER_GRAPH_OP("skiff.ChannelBlocked", channel_blocked_op, prepare_channel_blocked);

}  // namespace
}  // namespace ops
}  // namespace skiff::graph
