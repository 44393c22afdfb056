// Fused graph ops produced by the fusion passes (framework/graph/fusion.h). Each has a composite
// definition written with skiff ops (the reference, and the path for non-float32 tensors or when
// the oneDNN backend is absent) and a fast path through the fused kernels of
// framework/backends/onednn/fused_conv.h, looked up in the kernel registry.
//
//   skiff.FusedConv   inputs {x, W, B or "", residual (only with a "sum" step)}; the Conv attributes
//                     plus the post-op chain: "post_ops" (strings), "post_alpha", "post_beta" (floats).
//   skiff.Eltwise     inputs {x}; the post-op chain (no "sum").
//   skiff.ChannelMul  inputs {x, s}; y = x * s, plus x when attribute "residual" is 1.
//   skiff.ChannelConcat  a Concat along axis 1 whose inputs may be channel-blocked (attributes
//                     "channels", "dst_blocked"); see use_channel_concats.
//   skiff.UpsampleNearest  a Resize node (same inputs and attributes) plus an optional residual
//                     input 4 added to the result; fast path for integer nearest upsampling.
//   skiff.LayerNorm   inputs {x, gamma or "", beta or ""}, attribute epsilon: normalisation over the
//                     last axis (fuse_layer_norm); direct float32 loop, skiff ops otherwise.
//
// FusedConv and Eltwise parse their attributes in a prepare hook (once per
// Predictor step) and fall back to parsing the node when run without it.
//
// Chain steps: relu, clip (alpha = lo, beta = hi), hardswish, linear (alpha * x + beta), sigmoid,
// swish (x * sigmoid(alpha * x)), sum (+ residual).
#include "framework/graph/ops/fused.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "framework/backends/onednn/fused_conv.h"
#include "framework/core/threading.h"
#include "framework/graph/ops/common.h"
#include "framework/graph/ops/padding.h"
#include "framework/ops/nn/conv_params.h"

namespace skiff::graph {

namespace {

using onednn::PostOpKind;

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

Tensor apply_post_op(const PostOp& op, const Tensor& y, const Tensor& residual) {
  if (op.name == "relu") return relu(y);
  if (op.name == "leaky_relu") return leaky_relu(y, op.alpha);
  if (op.name == "clip") return clamp(y, op.alpha, op.beta);
  if (op.name == "hardswish") return hardswish(y);
  if (op.name == "sigmoid") return sigmoid(y);
  if (op.name == "swish") return mul(y, sigmoid(op.alpha == 1.f ? y : mul(y, scalar_tensor(op.alpha, y))));
  if (op.name == "linear") {
    Tensor r = op.alpha == 1.f ? y : mul(y, scalar_tensor(op.alpha, y));
    return op.beta == 0.f ? r : add(r, scalar_tensor(op.beta, y));
  }
  if (op.name == "sum") return add(y, residual);
  SKIFF_THROW(ValueError, "fused op: unknown post-op '{}'", op.name);
}

Tensor scalar_tensor(float v, const Tensor& like) {
  return to(full({}, double(v), DType::Float32), is_floating(like.dtype()) ? like.dtype() : DType::Float32);
}

namespace ops {
namespace {

/// The registered kernel `name` for float32 on the CPU, or null (backend not built or disabled).
const KernelEntry* cpu_f32_kernel(const char* name) {
  try {
    return &find_kernel(name, kCPU, DType::Float32);
  } catch (const NotImplementedError&) {
    return nullptr;
  }
}

/// Post-op chain as kernel attributes; false if a step has no kernel equivalent.
bool chain_attrs(const std::vector<PostOp>& chain, const Node& node, Attrs& a) {
  std::vector<int64_t> kinds;
  std::vector<double> alpha, beta;
  for (const auto& op : chain) {
    kinds.push_back(int64_t(kind_of(op.name, node)));
    alpha.push_back(op.alpha);
    beta.push_back(op.beta);
  }
  a.set("post_kinds", kinds).set("post_alpha", alpha).set("post_beta", beta);
  return true;
}

/// Symmetric 2-D padding of a fused conv node for input x, or false (asymmetric / unsupported).
bool conv_padding(const Node& node, const Tensor& x, const std::vector<int64_t>& kernel,
                  const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations,
                  std::vector<int64_t>& padding) {
  auto p = resolve_padding(node.attr_string("auto_pad", "NOTSET"), node.attr_ints("pads", {}), {x.size(2), x.size(3)},
                           kernel, strides, dilations);
  if (!p || !p->symmetric()) return false;
  padding = p->begin;
  return true;
}

std::vector<Tensor> fused_conv_composite(const OpContext& c, const std::vector<PostOp>& chain) {
  const GraphOp* conv = find_graph_op("Conv");
  SKIFF_ASSERT(conv != nullptr, "the Conv graph op is not registered");
  std::vector<Tensor> conv_inputs{c.input(0), c.input(1), c.has(2) ? c.inputs[2] : Tensor()};
  Tensor y = conv->run(OpContext{c.node, conv_inputs, c.opset})[0];
  Tensor residual = c.has(3) ? c.inputs[3] : Tensor();
  for (const auto& op : chain) y = apply_post_op(op, y, residual);
  return one(y);
}

/// A blocked (nChw16c) activation [N, ceil(C / 16), H, W, 16] back in NCHW.
Tensor unblocked(const Tensor& x, int64_t channels) {
  const KernelEntry* k = cpu_f32_kernel(onednn::kUnblockKernel);
  SKIFF_ASSERT(k != nullptr, "a blocked activation exists but the oneDNN backend is not available");
  std::vector<Tensor> inputs{contiguous(x)};
  std::vector<Tensor> outputs{empty({x.size(0), channels, x.size(2), x.size(3)}, DType::Float32)};
  k->fn(KernelContext{inputs, outputs, Attrs{}});
  return outputs[0];
}

/// What skiff.FusedConv and skiff.Eltwise read from their node, parsed once (prepare hook) or per
/// call when run without a prepared state.
struct ChainPrep {
  std::vector<PostOp> chain;
  KernelFn kernel = nullptr;  // the fused kernel, or null (backend absent / disabled)
  Attrs attrs;                // kernel attributes: the chain (and, for convs, geometry)
};

struct ConvPrep : ChainPrep {
  int64_t group = 1;
  std::vector<int64_t> strides, dilations;
  bool geometry_ok = false;     // 2-D strides and dilations
  bool static_padding = false;  // explicit symmetric pads: attrs already hold "padding"
  bool blocked_out = false;
};

ChainPrep make_chain_prep(const Node& node, const char* kernel_name) {
  ChainPrep p;
  p.chain = post_ops_of(node);
  const KernelEntry* k = cpu_f32_kernel(kernel_name);
  p.kernel = k ? k->fn : nullptr;  // the function, not the entry: registry entries may move
  chain_attrs(p.chain, node, p.attrs);
  return p;
}

ConvPrep make_conv_prep(const Node& node) {
  ConvPrep p;
  static_cast<ChainPrep&>(p) = make_chain_prep(node, onednn::kFusedConvKernel);
  p.group = node.attr_int("group", 1);
  p.strides = node.attr_ints("strides", {1, 1});
  p.dilations = node.attr_ints("dilations", {1, 1});
  p.geometry_ok = p.strides.size() == 2 && p.dilations.size() == 2;
  p.blocked_out = node.attr_int("dst_blocked", 0) != 0;
  p.attrs.set("stride", p.strides).set("dilation", p.dilations).set("groups", p.group);
  if (node.attr_string("auto_pad", "NOTSET") == "NOTSET") {
    auto pads = node.attr_ints("pads", std::vector<int64_t>(4, 0));
    if (pads.size() == 4 && pads[0] == pads[2] && pads[1] == pads[3]) {
      p.static_padding = true;
      p.attrs.set("padding", std::vector<int64_t>{pads[0], pads[1]});
    }
  }
  return p;
}

std::shared_ptr<const void> prepare_fused_conv(const Node& node, int64_t) {
  return std::make_shared<const ConvPrep>(make_conv_prep(node));
}

std::shared_ptr<const void> prepare_eltwise(const Node& node, int64_t) {
  return std::make_shared<const ChainPrep>(make_chain_prep(node, onednn::kEltwiseChainKernel));
}

std::vector<Tensor> fused_conv_op(const OpContext& c) {
  ConvPrep local;
  const ConvPrep* prep = static_cast<const ConvPrep*>(c.prepared);
  if (!prep) {
    local = make_conv_prep(c.node);
    prep = &local;
  }
  const std::vector<PostOp>& chain = prep->chain;
  const Tensor& w = c.input(1);
  const int64_t group = prep->group;
  // A blocked input comes from a fused conv that ran on oneDNN (see select_blocked_layouts).
  const bool blocked_in = c.inputs[0].dim() == 5;
  auto composite = [&] {
    std::vector<Tensor> inputs = c.inputs;
    if (blocked_in) inputs[0] = unblocked(inputs[0], w.size(1) * group);
    return fused_conv_composite(OpContext{c.node, inputs, c.opset}, chain);
  };
  const Tensor& x = c.input(0);
  const bool has_sum = c.has(3);
  auto all_f32 = [&] {
    for (size_t i = 0; i < c.num_inputs(); ++i)
      if (c.has(i) && c.inputs[i].dtype() != DType::Float32) return false;
    return true;
  };
  const KernelFn kernel = prep->kernel;
  if (!kernel || x.device() != kCPU || !all_f32() || (x.dim() != 4 && !blocked_in) || w.dim() != 4 ||
      !prep->geometry_ok)
    return composite();
  const Shape logical_x = blocked_in ? Shape{x.size(0), w.size(1) * group, x.size(2), x.size(3)} : x.shape();
  if (logical_x[1] != w.size(1) * group || w.size(0) % group != 0 || (c.has(2) && c.inputs[2].shape() != Shape{w.size(0)}))
    return composite();
  // Padding that depends on the input size (auto_pad SAME_*) is resolved per call.
  std::optional<Attrs> dynamic;
  if (!prep->static_padding) {
    std::vector<int64_t> padding;
    if (!conv_padding(c.node, x, {w.size(2), w.size(3)}, prep->strides, prep->dilations, padding)) return composite();
    dynamic = prep->attrs;
    dynamic->set("padding", padding);
  }
  const Attrs& a = dynamic ? *dynamic : prep->attrs;
  nn_detail::Conv2dParams p = nn_detail::Conv2dParams::from(logical_x, w.shape(), a);
  if (p.oh <= 0 || p.ow <= 0) return composite();
  if (has_sum && c.inputs[3].shape() != p.output_shape()) return composite();
  auto contig = [](const Tensor& t) { return t.defined() ? contiguous(t) : t; };
  std::vector<Tensor> args{contig(x), contig(w), c.has(2) ? contig(c.inputs[2]) : Tensor()};
  if (has_sum) args.push_back(contig(c.inputs[3]));
  const int64_t kb = onednn::kBlock;
  std::vector<Tensor> outputs{prep->blocked_out ? empty({p.n, (p.o + kb - 1) / kb, p.oh, p.ow, kb}, DType::Float32)
                                                : empty(p.output_shape(), DType::Float32)};
  try {
    kernel(KernelContext{args, outputs, a});
  } catch (const NotImplementedError&) {
    return composite();
  }
  return outputs;
}

/// skiff.ChannelConcat (use_channel_concats): Concat along the channels of [N, C_i, H, W] inputs,
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
    if (plain[i].dim() == 5) plain[i] = unblocked(plain[i], channels[i]);
  const GraphOp* concat_op = find_graph_op("Concat");
  SKIFF_ASSERT(concat_op != nullptr, "the Concat graph op is not registered");
  return concat_op->run(OpContext{c.node, plain, c.opset});
}

std::vector<Tensor> eltwise_op(const OpContext& c) {
  ChainPrep local;
  const ChainPrep* prep = static_cast<const ChainPrep*>(c.prepared);
  if (!prep) {
    local = make_chain_prep(c.node, onednn::kEltwiseChainKernel);
    prep = &local;
  }
  const Tensor& x = c.input(0);
  if (!prep->kernel || x.device() != kCPU || x.dtype() != DType::Float32) {
    Tensor y = x;
    for (const auto& op : prep->chain) y = apply_post_op(op, y, Tensor());
    return one(y);
  }
  std::vector<Tensor> inputs{contiguous(x)};
  std::vector<Tensor> outputs{empty(x.shape(), DType::Float32)};
  prep->kernel(KernelContext{inputs, outputs, prep->attrs});
  return outputs;
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
  const bool fast = a.dtype() == DType::Float32 && b.dtype() == DType::Float32 && a.device() == kCPU &&
                    b.device() == kCPU && (is_scale_for(b, a) || (!residual && is_scale_for(a, b)));
  if (!fast) {
    Tensor m = mul(a, b);
    return one(residual ? add(a, m) : m);
  }
  const Tensor x = contiguous(is_scale_for(b, a) ? a : b);
  const Tensor s = contiguous(is_scale_for(b, a) ? b : a);
  Tensor y = empty(x.shape(), DType::Float32);
  const int64_t n = x.size(0), ch = x.size(1), plane = x.size(2) * x.size(3);
  const bool per_sample = s.size(0) == n && n > 1;
  const float* xp = x.data<float>();
  const float* sp = s.data<float>();
  float* yp = y.data<float>();
  const int64_t planes = n * ch;
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (planes * plane > 32768)
  for (int64_t i = 0; i < planes; ++i) {
    const float k = sp[per_sample ? i : i % ch];
    const float* src = xp + i * plane;
    float* dst = yp + i * plane;
    if (residual) {
#pragma omp simd
      for (int64_t j = 0; j < plane; ++j) dst[j] = src[j] + src[j] * k;
    } else {
#pragma omp simd
      for (int64_t j = 0; j < plane; ++j) dst[j] = src[j] * k;
    }
  }
  return one(y);
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
  const bool fast = fh > 0 && fw > 0 && x.dtype() == DType::Float32 && x.device() == kCPU &&
                    (!with_residual || (c.inputs[4].dtype() == DType::Float32 &&
                                        c.inputs[4].shape() == Shape{x.size(0), x.size(1), x.size(2) * fh,
                                                                     x.size(3) * fw}));
  if (!fast) {
    const GraphOp* resize = find_graph_op("Resize");
    std::vector<Tensor> args(c.inputs.begin(), c.inputs.begin() + std::min<size_t>(c.num_inputs(), 4));
    Tensor y = resize->run(OpContext{c.node, args, c.opset})[0];
    return one(with_residual ? add(c.inputs[4], y) : y);
  }
  const Tensor xc = contiguous(x);
  const Tensor r = with_residual ? contiguous(c.inputs[4]) : Tensor();
  const int64_t h = x.size(2), w = x.size(3), oh = h * fh, ow = w * fw, planes = x.size(0) * x.size(1);
  Tensor y = empty({x.size(0), x.size(1), oh, ow}, DType::Float32);
  const float* xp = xc.data<float>();
  const float* rp = with_residual ? r.data<float>() : nullptr;
  float* yp = y.data<float>();
  // Per source row: widen it once into the first output row (no division per element), then
  // copy it to the other fh - 1 rows, or add the residual to each of the fh rows.
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (planes * oh * ow > 32768)
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t sy = 0; sy < h; ++sy) {
      const float* src = xp + (p * h + sy) * w;
      float* first = yp + (p * oh + sy * fh) * ow;
      if (fw == 1) {
        std::memcpy(first, src, size_t(w) * sizeof(float));
      } else if (fw == 2) {
#pragma omp simd
        for (int64_t j = 0; j < w; ++j) first[2 * j] = first[2 * j + 1] = src[j];
      } else {
        for (int64_t j = 0; j < w; ++j)
          for (int64_t k = 0; k < fw; ++k) first[j * fw + k] = src[j];
      }
      for (int64_t r = fh - 1; r >= 0; --r) {  // row 0 last: it is the source of the others
        float* dst = first + r * ow;
        if (rp) {
          const float* res = rp + (p * oh + sy * fh + r) * ow;
#pragma omp simd
          for (int64_t j = 0; j < ow; ++j) dst[j] = res[j] + first[j];
        } else if (r > 0) {
          std::memcpy(dst, first, size_t(ow) * sizeof(float));
        }
      }
    }
  }
  return one(y);
}

// ---- skiff.LayerNorm ---------------------------------------------------------------------------

/// y = (x - mean) / sqrt(var + eps) * gamma + beta over the last axis (biased variance), as the
/// ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add nodes it replaces compute it; gamma and beta are optional.
std::vector<Tensor> layer_norm_fast_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  const Tensor gamma = c.has(1) ? c.inputs[1] : Tensor(), beta = c.has(2) ? c.inputs[2] : Tensor();
  const float eps = c.node.attr_float("epsilon", 1e-5f);
  const int64_t n = x.dim() > 0 ? x.size(-1) : 0;
  // A parameter the loop can read: float32, n or 1 values, and no dims that widen the result.
  auto loop_param = [&](const Tensor& p) {
    return !p.defined() || (p.dtype() == DType::Float32 && p.device() == kCPU && p.dim() <= x.dim() &&
                            (p.numel() == n || p.numel() == 1));
  };
  if (x.dtype() != DType::Float32 || x.device() != kCPU || n == 0 || !loop_param(gamma) || !loop_param(beta)) {
    Tensor mu = mean(x, {-1}, true);
    Tensor d = sub(x, mu);
    Tensor y = div(d, sqrt(add(mean(mul(d, d), {-1}, true), scalar_tensor(eps, x))));
    if (gamma.defined()) y = mul(y, gamma);
    if (beta.defined()) y = add(y, beta);
    return one(y);
  }
  const Tensor xc = contiguous(x);
  const Tensor gc = gamma.defined() ? contiguous(gamma) : Tensor(), bc = beta.defined() ? contiguous(beta) : Tensor();
  Tensor y = empty(x.shape(), DType::Float32);
  const float* xp = xc.data<float>();
  const float* gp = gc.defined() ? gc.data<float>() : nullptr;
  const float* bp = bc.defined() ? bc.data<float>() : nullptr;
  const int64_t gs = gc.defined() && gc.numel() == n ? 1 : 0, bs = bc.defined() && bc.numel() == n ? 1 : 0;
  float* yp = y.data<float>();
  const int64_t rows = x.numel() / n;
#pragma omp parallel for num_threads(num_threads()) schedule(static) if (rows * n > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = xp + r * n;
    float* d = yp + r * n;
    double sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += s[j];
    const float mu = float(sum / double(n));
    double sq = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double v = double(s[j] - mu);
      sq += v * v;
    }
    const float inv = float(1.0 / std::sqrt(double(float(sq / double(n))) + double(eps)));
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) {
      float v = (s[j] - mu) * inv;
      if (gp) v *= gp[j * gs];
      if (bp) v += bp[j * bs];
      d[j] = v;
    }
  }
  return one(y);
}

SKIFF_REGISTER_GRAPH_OP("skiff.LayerNorm", layer_norm_fast_op);
SKIFF_REGISTER_GRAPH_OP("skiff.UpsampleNearest", upsample_nearest_op);
SKIFF_REGISTER_GRAPH_OP("skiff.FusedConv", fused_conv_op, prepare_fused_conv);
SKIFF_REGISTER_GRAPH_OP("skiff.Eltwise", eltwise_op, prepare_eltwise);
SKIFF_REGISTER_GRAPH_OP("skiff.ChannelMul", channel_mul_op);
SKIFF_REGISTER_GRAPH_OP("skiff.ChannelConcat", channel_concat_op);

}  // namespace
}  // namespace ops
}  // namespace skiff::graph
