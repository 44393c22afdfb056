// Declarations of the fused inference ops (fused.h says what each computes). The shape rules
// here are the whole contract the kernels rely on: every kernel may assume what infer checked.
#include "framework/ops/nn/fused.h"

#include <string>

#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/nn/conv_params.h"
#include "framework/ops/nn/resample.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

using nn_detail::Conv2dParams;

int64_t blocks_of(int64_t channels) { return (channels + kChannelBlock - 1) / kChannelBlock; }

/// The reference kernels compose ops (conv2d among them) that run float32 and float64.
void check_floating(const char* op, const Tensor& t, const char* what) {
  SKIFF_CHECK_DTYPE(t.dtype() == DType::Float32 || t.dtype() == DType::Float64,
                    "{}: expected a float32 or float64 {}, got {}", op, what, dtype_name(t.dtype()));
}

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b, const char* what) {
  SKIFF_CHECK_DTYPE(a.dtype() == b.dtype(), "{}: expected the {} in {} (the input's dtype), got {}", op, what,
                    dtype_name(a.dtype()), dtype_name(b.dtype()));
}

bool chain_has_sum(const std::vector<PostStep>& chain) {
  for (const PostStep& s : chain)
    if (s.kind == PostOpKind::Sum) return true;
  return false;
}

/// The NCHW shape a channel-blocked [N, B, H, W, 16] value holding `channels` channels stands for.
Shape logical_nchw(const char* op, const Tensor& x, int64_t channels) {
  SKIFF_CHECK_SHAPE(x.dim() == 5 && x.size(4) == kChannelBlock && x.size(1) == blocks_of(channels),
                    "{}: expected a channel-blocked input [N, {}, H, W, {}] for {} channels, got shape {}", op,
                    blocks_of(channels), kChannelBlock, channels, x.shape());
  return {x.size(0), channels, x.size(2), x.size(3)};
}

// ---- fused_conv2d --------------------------------------------------------------------------------
// inputs {x, weight, [bias], [residual]}; attrs: stride, padding, dilation, groups, has_bias,
// blocked_output and the post-op chain.

std::vector<TensorMeta> fused_conv2d_infer(const std::vector<Tensor>& in, const Attrs& a) {
  const char* op = "fused_conv2d";
  const Tensor& x = in[0];
  const Tensor& w = in[1];
  check_floating(op, x, "input");
  check_same_dtype(op, x, w, "weight");
  SKIFF_CHECK_SHAPE(w.dim() == 4, "{}: expected a 4-D weight [O, C / groups, kh, kw], got shape {}", op, w.shape());
  const int64_t groups = a.get_int("groups");
  SKIFF_CHECK(groups >= 1, "{}: expected groups >= 1, got {}", op, groups);
  const Shape xs = x.dim() == 5 ? logical_nchw(op, x, w.size(1) * groups) : x.shape();
  SKIFF_CHECK_SHAPE(xs.size() == 4, "{}: expected a 4-D input [N, C, H, W] or a channel-blocked one, got shape {}", op,
                    x.shape());
  SKIFF_CHECK_SHAPE(xs[1] == w.size(1) * groups && w.size(0) % groups == 0,
                    "{}: input {} and weight {} do not match for groups = {}", op, x.shape(), w.shape(), groups);
  const Conv2dParams p = Conv2dParams::from(xs, w.shape(), a);
  SKIFF_CHECK_SHAPE(p.oh > 0 && p.ow > 0, "{}: the window does not fit input {} (weight {}, padding [{}, {}])", op,
                    xs, w.shape(), p.ph, p.pw);
  const bool has_bias = a.get_bool("has_bias");
  const bool has_sum = chain_has_sum(nn_detail::post_chain(a, op));
  const size_t expected = 2 + size_t(has_bias) + size_t(has_sum);
  SKIFF_CHECK(in.size() == expected, "{}: expected {} inputs (x, weight{}{}), got {}", op, expected,
              has_bias ? ", bias" : "", has_sum ? ", residual" : "", in.size());
  if (has_bias) {
    check_same_dtype(op, x, in[2], "bias");
    SKIFF_CHECK_SHAPE(in[2].shape() == Shape{p.o}, "{}: expected a bias of shape [{}], got {}", op, p.o,
                      in[2].shape());
  }
  if (has_sum) {
    const Tensor& r = in.back();
    check_same_dtype(op, x, r, "residual");
    const Shape rs = r.dim() == 5 ? logical_nchw(op, r, p.o) : r.shape();
    SKIFF_CHECK_SHAPE(rs == p.output_shape(), "{}: expected a residual of shape {} (or channel-blocked), got {}", op,
                      p.output_shape(), r.shape());
  }
  if (a.get_bool("blocked_output")) return {{Shape{p.n, blocks_of(p.o), p.oh, p.ow, kChannelBlock}, x.dtype()}};
  return {{p.output_shape(), x.dtype()}};
}

const OpDef kFusedConv2d{.name = "fused_conv2d", .infer = fused_conv2d_infer};
SKIFF_REGISTER_OP(kFusedConv2d);

// ---- eltwise_chain -------------------------------------------------------------------------------

std::vector<TensorMeta> eltwise_chain_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_floating("eltwise_chain", in[0], "input");
  SKIFF_CHECK(!chain_has_sum(nn_detail::post_chain(a, "eltwise_chain")),
              "eltwise_chain: a Sum step needs a residual; only fused_conv2d takes one");
  return {{in[0].shape(), in[0].dtype()}};
}

const OpDef kEltwiseChain{.name = "eltwise_chain", .infer = eltwise_chain_infer};
SKIFF_REGISTER_OP(kEltwiseChain);

// ---- unblock_channels ----------------------------------------------------------------------------

std::vector<TensorMeta> unblock_channels_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_floating("unblock_channels", in[0], "input");
  const int64_t channels = a.get_int("channels");
  SKIFF_CHECK(channels >= 0, "unblock_channels: expected channels >= 0, got {}", channels);
  return {{logical_nchw("unblock_channels", in[0], channels), in[0].dtype()}};
}

const OpDef kUnblockChannels{.name = "unblock_channels", .infer = unblock_channels_infer};
SKIFF_REGISTER_OP(kUnblockChannels);

// ---- channel_mul ---------------------------------------------------------------------------------

std::vector<TensorMeta> channel_mul_infer(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor& x = in[0];
  const Tensor& s = in[1];
  check_floating("channel_mul", x, "input");
  check_same_dtype("channel_mul", x, s, "scale");
  SKIFF_CHECK_SHAPE(x.dim() == 4 && s.dim() == 4 && (s.size(0) == x.size(0) || s.size(0) == 1) &&
                        s.size(1) == x.size(1) && s.size(2) == 1 && s.size(3) == 1,
                    "channel_mul: expected x [N, C, H, W] and a scale [N or 1, C, 1, 1], got {} and {}", x.shape(),
                    s.shape());
  return {{x.shape(), x.dtype()}};
}

const OpDef kChannelMul{.name = "channel_mul", .infer = channel_mul_infer};
SKIFF_REGISTER_OP(kChannelMul);

// ---- upsample_nearest2d --------------------------------------------------------------------------
// inputs {x, [residual]}; attrs "factors" {fh, fw}.

std::vector<TensorMeta> upsample_nearest2d_infer(const std::vector<Tensor>& in, const Attrs& a) {
  const char* op = "upsample_nearest2d";
  const Tensor& x = in[0];
  check_floating(op, x, "input");
  SKIFF_CHECK_SHAPE(x.dim() == 4, "{}: expected a 4-D input [N, C, H, W], got shape {}", op, x.shape());
  const auto& f = a.get_ints("factors");
  SKIFF_CHECK(f.size() == 2 && f[0] >= 1 && f[1] >= 1, "{}: expected two whole factors >= 1, got {}", op, f.size());
  const Shape out{x.size(0), x.size(1), x.size(2) * f[0], x.size(3) * f[1]};
  if (in.size() > 1) {
    check_same_dtype(op, x, in[1], "residual");
    SKIFF_CHECK_SHAPE(in[1].shape() == out, "{}: expected a residual of shape {}, got {}", op, out, in[1].shape());
  }
  return {{out, x.dtype()}};
}

const OpDef kUpsampleNearest2d{.name = "upsample_nearest2d", .infer = upsample_nearest2d_infer};
SKIFF_REGISTER_OP(kUpsampleNearest2d);

// ---- max_pool2d_blocked / resize_bilinear_blocked --------------------------------------------------
// Both take x [N, B, H, W, 16]; max_pool2d_blocked has max_pool2d's attributes (kernel, stride,
// padding, dilation, ceil_mode), resize_bilinear_blocked "out_size" {oh, ow} and "align_corners".

void check_blocked_input(const char* op, const Tensor& x) {
  check_floating(op, x, "input");
  SKIFF_CHECK_SHAPE(x.dim() == 5 && x.size(4) == kChannelBlock,
                    "{}: expected a channel-blocked input [N, B, H, W, {}], got shape {}", op, kChannelBlock, x.shape());
}

std::vector<TensorMeta> max_pool2d_blocked_infer(const std::vector<Tensor>& in, const Attrs& a) {
  const char* op = "max_pool2d_blocked";
  const Tensor& x = in[0];
  check_blocked_input(op, x);
  const nn_detail::Pool2dParams p = nn_detail::Pool2dParams::from({x.size(0), x.size(1) * kChannelBlock, x.size(2), x.size(3)}, a);
  SKIFF_CHECK(p.ph <= p.kh / 2 && p.pw <= p.kw / 2,
              "{}: expected padding at most half the kernel, got padding [{}, {}] and kernel [{}, {}]", op, p.ph,
              p.pw, p.kh, p.kw);
  SKIFF_CHECK_SHAPE(p.oh > 0 && p.ow > 0, "{}: the window (kernel [{}, {}], padding [{}, {}]) does not fit input {}", op,
                    p.kh, p.kw, p.ph, p.pw, x.shape());
  return {{Shape{x.size(0), x.size(1), p.oh, p.ow, kChannelBlock}, x.dtype()}};
}

const OpDef kMaxPool2dBlocked{.name = "max_pool2d_blocked", .infer = max_pool2d_blocked_infer};
SKIFF_REGISTER_OP(kMaxPool2dBlocked);

std::vector<TensorMeta> resize_bilinear_blocked_infer(const std::vector<Tensor>& in, const Attrs& a) {
  const char* op = "resize_bilinear_blocked";
  const Tensor& x = in[0];
  check_blocked_input(op, x);
  const auto& size = a.get_ints("out_size");
  SKIFF_CHECK(size.size() == 2 && size[0] > 0 && size[1] > 0, "{}: expected two positive output sizes, got {}", op,
              size);
  return {{Shape{x.size(0), x.size(1), size[0], size[1], kChannelBlock}, x.dtype()}};
}

const OpDef kResizeBilinearBlocked{.name = "resize_bilinear_blocked", .infer = resize_bilinear_blocked_infer};
SKIFF_REGISTER_OP(kResizeBilinearBlocked);

}  // namespace

Tensor max_pool2d_blocked(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                          std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
  const char* op = "max_pool2d_blocked";
  const std::vector<int64_t> k = nn_detail::pair_param(op, "kernel", kernel, 1);
  return call_op1(kMaxPool2dBlocked, {x},
                  Attrs{{"kernel", k},
                        {"stride", stride.empty() ? k : nn_detail::pair_param(op, "stride", stride, 1)},
                        {"padding", nn_detail::pair_param(op, "padding", padding, 0)},
                        {"dilation", nn_detail::pair_param(op, "dilation", dilation, 1)},
                        {"ceil_mode", ceil_mode}});
}

Tensor resize_bilinear_blocked(const Tensor& x, int64_t oh, int64_t ow, bool align_corners) {
  return call_op1(kResizeBilinearBlocked, {x},
                  Attrs{{"out_size", std::vector<int64_t>{oh, ow}}, {"align_corners", align_corners}});
}

Tensor fused_conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& residual,
                    const FusedConv2dOptions& o) {
  Attrs a{{"stride", nn_detail::pair_param("fused_conv2d", "stride", o.stride, 1)},
          {"padding", nn_detail::pair_param("fused_conv2d", "padding", o.padding, 0)},
          {"dilation", nn_detail::pair_param("fused_conv2d", "dilation", o.dilation, 1)},
          {"groups", o.groups},
          {"has_bias", bias.defined()},
          {"blocked_output", o.blocked_output}};
  nn_detail::set_post_chain(a, o.post_ops);
  const bool has_sum = chain_has_sum(o.post_ops);
  SKIFF_CHECK(has_sum == residual.defined(), "fused_conv2d: {}", has_sum ? "the Sum step needs a residual"
                                                                         : "a residual needs a Sum step to add it");
  std::vector<Tensor> inputs{x, weight};
  if (bias.defined()) inputs.push_back(bias);
  if (has_sum) inputs.push_back(residual);
  return call_op1(kFusedConv2d, inputs, a);
}

Tensor eltwise_chain(const Tensor& x, const std::vector<PostStep>& chain) {
  Attrs a;
  nn_detail::set_post_chain(a, chain);
  return call_op1(kEltwiseChain, {x}, a);
}

Tensor unblock_channels(const Tensor& x, int64_t channels) {
  return call_op1(kUnblockChannels, {x}, Attrs{{"channels", channels}});
}

Tensor to_channel_blocked(const Tensor& x) {
  SKIFF_CHECK_SHAPE(x.dim() == 4, "to_channel_blocked: expected a 4-D input [N, C, H, W], got shape {}", x.shape());
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3), b = blocks_of(c);
  // Zero channels up to whole blocks, then [N, B, 16, H, W] -> [N, B, H, W, 16].
  const Tensor padded = b * kChannelBlock == c ? x : pad(x, {0, 0, 0, 0, 0, b * kChannelBlock - c});
  return contiguous(permute(reshape(padded, {n, b, kChannelBlock, h, w}), {0, 1, 3, 4, 2}));
}

Tensor channel_mul(const Tensor& x, const Tensor& scale, bool add_input) {
  return call_op1(kChannelMul, {x, scale}, Attrs{{"add_input", add_input}});
}

Tensor upsample_nearest2d(const Tensor& x, int64_t fh, int64_t fw, const Tensor& residual) {
  std::vector<Tensor> inputs{x};
  if (residual.defined()) inputs.push_back(residual);
  return call_op1(kUpsampleNearest2d, inputs, Attrs{{"factors", std::vector<int64_t>{fh, fw}}});
}

bool fused_conv2d_prefers_blocked() {
  try {
    return find_kernel(kFusedConv2d.name, kCPU, DType::Float32).backend != "cpu";
  } catch (const NotImplementedError&) {
    return false;
  }
}

namespace nn_detail {

Attrs& set_post_chain(Attrs& a, const std::vector<PostStep>& chain) {
  std::vector<int64_t> kinds;
  std::vector<double> alpha, beta;
  for (const PostStep& s : chain) {
    kinds.push_back(int64_t(s.kind));
    alpha.push_back(s.alpha);
    beta.push_back(s.beta);
  }
  return a.set("post_kinds", kinds).set("post_alpha", alpha).set("post_beta", beta);
}

std::vector<PostStep> post_chain(const Attrs& a, const char* op) {
  std::vector<PostStep> chain;
  if (!a.has("post_kinds")) return chain;
  const auto& kinds = a.get_ints("post_kinds");
  const auto& alpha = a.get_floats("post_alpha");
  const auto& beta = a.get_floats("post_beta");
  SKIFF_CHECK(alpha.size() == kinds.size() && beta.size() == kinds.size(),
              "{}: post_kinds, post_alpha and post_beta have {}, {} and {} values", op, kinds.size(), alpha.size(),
              beta.size());
  int sums = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    SKIFF_CHECK(kinds[i] >= 0 && kinds[i] <= int64_t(PostOpKind::LeakyRelu), "{}: unknown post-op kind {}", op,
                kinds[i]);
    chain.push_back({PostOpKind(kinds[i]), float(alpha[i]), float(beta[i])});
    sums += chain.back().kind == PostOpKind::Sum;
  }
  SKIFF_CHECK(sums <= 1, "{}: a chain adds the residual at most once, got {} Sum steps", op, sums);
  return chain;
}

Tensor apply_post_step(const PostStep& s, const Tensor& y, const Tensor& residual) {
  switch (s.kind) {
    case PostOpKind::Relu: return relu(y);
    case PostOpKind::LeakyRelu: return leaky_relu(y, s.alpha);
    case PostOpKind::Clip: return clamp(y, s.alpha, s.beta);
    case PostOpKind::HardSwish: return hardswish(y);
    case PostOpKind::Logistic: return sigmoid(y);
    case PostOpKind::Swish: return mul(y, sigmoid(s.alpha == 1.f ? y : mul(y, double(s.alpha))));
    case PostOpKind::Linear: {
      Tensor r = s.alpha == 1.f ? y : mul(y, double(s.alpha));
      return s.beta == 0.f ? r : add(r, double(s.beta));
    }
    case PostOpKind::Sum: return add(y, residual);
  }
  SKIFF_THROW(ValueError, "post-op chain: unknown step kind {}", int64_t(s.kind));
}

}  // namespace nn_detail
}  // namespace skiff
