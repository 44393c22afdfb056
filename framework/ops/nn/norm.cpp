// Normalization ops: layer_norm and batch_norm are primitive ops with a fused CPU
// kernel; group_norm is layer_norm over reshaped groups plus a per-channel affine.
//
// Both primitives return three outputs: y, and the mean and biased variance they
// normalized with (kept-dim shape, x's dtype). The backward reads the saved mean and
// variance as *outputs* of this node, so for gradients of gradients they are
// differentiable functions of x; the backward therefore also accepts gradients for
// those two outputs (d mean/dx = 1/n, d var/dx = 2 (x - mean)/n).
#include <numeric>

#include "framework/core/dtype.h"
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/nn/norm.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

constexpr uint32_t kSaveXAndWeight = 0b11, kSaveStats = 0b110;

// Reduced dims (statistics) and the dims a per-feature weight is broadcast over.
struct NormLayout {
  std::vector<int64_t> stat_dims;    ///< dims the mean/var are taken over
  std::vector<int64_t> weight_dims;  ///< dims summed to get the weight/bias gradient
  Shape weight_view;                 ///< weight reshaped to broadcast against x
  int64_t n = 1;                     ///< elements per statistic
};

NormLayout layer_norm_layout(const Shape& x, int64_t axis) {
  NormLayout L;
  for (int64_t d = 0; d < x.size(); ++d) {
    if (d < axis) {
      L.weight_dims.push_back(d);
    } else {
      L.stat_dims.push_back(d);
      L.weight_view.push_back(x[d]);
      L.n *= x[d];
    }
  }
  return L;
}

NormLayout batch_norm_layout(const Shape& x) {
  NormLayout L;
  for (int64_t d = 0; d < x.size(); ++d) {
    if (d != 1) {
      L.stat_dims.push_back(d);
      L.n *= x[d];
    }
    if (d >= 1) L.weight_view.push_back(d == 1 ? x[1] : 1);
  }
  L.weight_dims = L.stat_dims;
  return L;
}

// Shared backward of layer_norm and batch_norm (inputs: x, [weight], [bias]).
// grad_x = rstd * g_hat + a + b * x_hat, with per-statistic coefficients
//   a = -rstd * mean(g_hat) + grad_mean / n,  b = -rstd * mean(g_hat * x_hat) + 2 grad_var / (n rstd),
// where x_hat = (x - mean) * rstd and g_hat = g * weight.
std::vector<Tensor> normalize_backward(BackwardContext& ctx, const NormLayout& L) {
  const Attrs& a = ctx.attrs();
  const bool has_weight = a.get_bool("has_weight"), has_bias = a.get_bool("has_bias");
  std::vector<Tensor> grads(size_t(ctx.num_inputs()));
  const int weight_slot = 1, bias_slot = has_weight ? 2 : 1;
  const bool need_x = ctx.needs_grad(0);
  const bool need_w = has_weight && ctx.needs_grad(weight_slot);
  const bool need_b = has_bias && ctx.needs_grad(bias_slot);
  const Tensor& g = ctx.grad(0);
  if (need_b) grads[size_t(bias_slot)] = reshape(sum(g, L.weight_dims), ctx.input_meta(bias_slot).shape);
  if (!need_x && !need_w) return grads;

  Tensor x = ctx.input(0), mu = ctx.output(1), var = ctx.output(2);
  Tensor rstd = rsqrt(add(var, a.get_float("eps")));
  Tensor x_hat = mul(sub(x, mu), rstd);
  if (need_w) grads[size_t(weight_slot)] = reshape(sum(mul(g, x_hat), L.weight_dims), ctx.input_meta(1).shape);
  if (need_x) {
    Tensor g_hat = has_weight ? mul(g, reshape(ctx.input(1), L.weight_view)) : g;
    const double inv_n = 1.0 / double(L.n);
    Tensor coef_a = add(neg(mul(rstd, mean(g_hat, L.stat_dims, true))), mul(ctx.grad(1), inv_n));
    Tensor coef_b = add(neg(mul(rstd, mean(mul(g_hat, x_hat), L.stat_dims, true))),
                        div(mul(ctx.grad(2), 2.0 * inv_n), rstd));
    grads[0] = add(add(mul(g_hat, rstd), coef_a), mul(coef_b, x_hat));
  }
  return grads;
}

std::vector<TensorMeta> layer_norm_infer(const std::vector<Tensor>& in, const Attrs& a) {
  Shape stats = in[0].shape();
  for (int64_t d = a.get_int("axis"); d < stats.size(); ++d) stats[d] = 1;
  return {{in[0].shape(), in[0].dtype()}, {stats, in[0].dtype()}, {stats, in[0].dtype()}};
}
std::vector<Tensor> layer_norm_backward(BackwardContext& ctx) {
  return normalize_backward(ctx, layer_norm_layout(ctx.input_meta(0).shape, ctx.attrs().get_int("axis")));
}
const OpDef kLayerNorm{.name = "layer_norm", .infer = layer_norm_infer, .backward = layer_norm_backward,
                       .save_inputs = kSaveXAndWeight, .save_outputs = kSaveStats};
SKIFF_REGISTER_OP(kLayerNorm);

std::vector<TensorMeta> batch_norm_infer(const std::vector<Tensor>& in, const Attrs&) {
  Shape stats = in[0].shape();
  for (int64_t d = 0; d < stats.size(); ++d)
    if (d != 1) stats[d] = 1;
  return {{in[0].shape(), in[0].dtype()}, {stats, in[0].dtype()}, {stats, in[0].dtype()}};
}
// First-order batch_norm gradients in one fused kernel (two passes over x and
// the gradient, no full-size temporaries): inputs grad_y, x, mean, var,
// grad_mean, grad_var, [weight]; outputs grad_x, grad_weight [C], grad_bias [C].
// Not differentiable itself: with create_graph the composite
// normalize_backward() runs instead.
std::vector<TensorMeta> batch_norm_backward_infer(const std::vector<Tensor>& in, const Attrs&) {
  const Shape& x = in[1].shape();
  SKIFF_CHECK_SHAPE(in[0].shape() == x, "batch_norm_backward: grad {} and input {} must have one shape", in[0].shape(),
                    x);
  return {{x, in[1].dtype()}, {Shape{x[1]}, in[1].dtype()}, {Shape{x[1]}, in[1].dtype()}};
}
const OpDef kBatchNormBackward{.name = "batch_norm_backward", .infer = batch_norm_backward_infer, .dispatch_input = 1};
SKIFF_REGISTER_OP(kBatchNormBackward);

std::vector<Tensor> batch_norm_backward(BackwardContext& ctx) {
  const NormLayout layout = batch_norm_layout(ctx.input_meta(0).shape);
  if (GradMode::enabled()) return normalize_backward(ctx, layout);
  const Attrs& a = ctx.attrs();
  const bool has_weight = a.get_bool("has_weight"), has_bias = a.get_bool("has_bias");
  Tensor mean = ctx.output(1), var = ctx.output(2);
  auto or_zeros = [&](const Tensor& t) { return t.defined() ? t : zeros(mean.shape(), mean.dtype()); };
  std::vector<Tensor> in{ctx.grad(0), ctx.input(0), mean, var, or_zeros(ctx.grad(1)), or_zeros(ctx.grad(2))};
  if (has_weight) in.push_back(ctx.input(1));
  std::vector<Tensor> out = call_op(kBatchNormBackward, in, {{"eps", a.get_float("eps")}, {"has_weight", has_weight}});
  std::vector<Tensor> grads(size_t(ctx.num_inputs()));
  const int weight_slot = 1, bias_slot = has_weight ? 2 : 1;
  if (ctx.needs_grad(0)) grads[0] = out[0];
  if (has_weight && ctx.needs_grad(weight_slot)) grads[size_t(weight_slot)] = reshape(out[1], ctx.input_meta(1).shape);
  if (has_bias && ctx.needs_grad(bias_slot)) grads[size_t(bias_slot)] = reshape(out[2], ctx.input_meta(bias_slot).shape);
  return grads;
}
const OpDef kBatchNorm{.name = "batch_norm", .infer = batch_norm_infer, .backward = batch_norm_backward,
                       .save_inputs = kSaveXAndWeight, .save_outputs = kSaveStats};
SKIFF_REGISTER_OP(kBatchNorm);

void check_float(const char* op, const char* what, const Tensor& t) {
  SKIFF_CHECK_DTYPE(is_floating(t.dtype()), "{}: expected {} to be a float tensor, got {}", op, what,
                    dtype_name(t.dtype()));
}

// Inputs x, [weight], [bias] with has_weight/has_bias attrs.
std::vector<Tensor> affine_inputs(const char* op, const Tensor& x, const Tensor& weight, const Tensor& bias,
                                  const Shape& param_shape, Attrs& attrs) {
  std::vector<Tensor> in{x};
  for (auto [t, what, flag] : {std::tuple{&weight, "weight", "has_weight"}, std::tuple{&bias, "bias", "has_bias"}}) {
    attrs.set(flag, t->defined());
    if (!t->defined()) continue;
    SKIFF_CHECK_SHAPE(t->shape() == param_shape, "{}: expected {} of shape {}, got {}", op, what, param_shape,
                      t->shape());
    SKIFF_CHECK_DTYPE(t->dtype() == x.dtype(), "{}: expected {} of dtype {} (the input's), got {}", op, what,
                      dtype_name(x.dtype()), dtype_name(t->dtype()));
    in.push_back(*t);
  }
  return in;
}

// Per-channel [C] tensor viewed to broadcast over x [N, C, *].
Tensor channel_view(const Tensor& t, int64_t ndim) {
  Shape s{t.numel()};
  for (int64_t d = 2; d < ndim; ++d) s.push_back(1);
  return reshape(t, s);
}

}  // namespace

Tensor layer_norm(const Tensor& x, const std::vector<int64_t>& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  check_float("layer_norm", "input", x);
  const int64_t k = int64_t(normalized_shape.size());
  SKIFF_CHECK(k > 0, "layer_norm: expected a non-empty normalized_shape, got []");
  SKIFF_CHECK(eps >= 0, "layer_norm: expected eps >= 0, got {}", eps);
  Shape norm_shape(normalized_shape);
  bool trailing_match = k <= x.dim();
  for (int64_t i = 0; trailing_match && i < k; ++i) trailing_match = x.shape()[x.dim() - k + i] == norm_shape[i];
  SKIFF_CHECK_SHAPE(trailing_match, "layer_norm: expected input with trailing dims {}, got shape {}", norm_shape,
                    x.shape());
  Attrs attrs{{"axis", x.dim() - k}, {"eps", eps}};
  std::vector<Tensor> in = affine_inputs("layer_norm", x, weight, bias, norm_shape, attrs);
  return call_op(kLayerNorm, in, attrs)[0];
}

Tensor group_norm(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps) {
  check_float("group_norm", "input", x);
  SKIFF_CHECK_SHAPE(x.dim() >= 2, "group_norm: expected input [N, C, *], got shape {}", x.shape());
  const int64_t n = x.shape()[0], c = x.shape()[1];
  SKIFF_CHECK(groups > 0 && c % groups == 0, "group_norm: expected groups > 0 dividing C = {}, got {} (shape {})", c,
              groups, x.shape());
  SKIFF_CHECK(eps >= 0, "group_norm: expected eps >= 0, got {}", eps);
  Attrs unused;
  affine_inputs("group_norm", x, weight, bias, Shape{c}, unused);  // validates weight/bias
  Tensor grouped = reshape(x, {n, groups, n == 0 ? 0 : x.numel() / (n * groups)});
  Tensor y = reshape(call_op(kLayerNorm, {grouped}, {{"axis", int64_t(2)}, {"eps", eps}, {"has_weight", false},
                                                     {"has_bias", false}})[0],
                     x.shape());
  if (weight.defined()) y = mul(y, channel_view(weight, x.dim()));
  if (bias.defined()) y = add(y, channel_view(bias, x.dim()));
  return y;
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  check_float("batch_norm", "input", x);
  SKIFF_CHECK_SHAPE(x.dim() >= 2, "batch_norm: expected input [N, C, *], got shape {}", x.shape());
  SKIFF_CHECK(running_mean.defined() == running_var.defined(),
              "batch_norm: expected running_mean and running_var both given or both omitted, got only {}",
              running_mean.defined() ? "running_mean" : "running_var");
  SKIFF_CHECK(eps >= 0, "batch_norm: expected eps >= 0, got {}", eps);
  const int64_t c = x.shape()[1];
  const Shape param_shape{c};
  Attrs attrs{{"eps", eps}};
  std::vector<Tensor> in = affine_inputs("batch_norm", x, weight, bias, param_shape, attrs);
  for (auto [t, what] : {std::pair{&running_mean, "running_mean"}, std::pair{&running_var, "running_var"}}) {
    if (!t->defined()) continue;
    SKIFF_CHECK_SHAPE(t->shape() == param_shape, "batch_norm: expected {} of shape {}, got {}", what, param_shape,
                      t->shape());
    check_float("batch_norm", what, *t);
  }

  if (training || !running_mean.defined()) {
    const int64_t per_channel = c == 0 ? 0 : x.numel() / c;
    SKIFF_CHECK(per_channel > 1, "batch_norm: expected more than 1 value per channel when training, got input "
                "shape {}", x.shape());
    std::vector<Tensor> out = call_op(kBatchNorm, in, attrs);
    if (training && running_mean.defined()) {
      NoGradGuard no_grad;
      const double unbias = double(per_channel) / double(per_channel - 1);
      Tensor batch_mean = to(reshape(detach(out[1]), param_shape), running_mean.dtype());
      Tensor batch_var = to(reshape(mul(detach(out[2]), unbias), param_shape), running_var.dtype());
      detail::copy_into(running_mean, add(mul(running_mean, 1.0 - momentum), mul(batch_mean, momentum)));
      detail::copy_into(running_var, add(mul(running_var, 1.0 - momentum), mul(batch_var, momentum)));
      running_mean.storage()->bump_version();
      running_var.storage()->bump_version();
    }
    return out[0];
  }

  // Eval: one per-channel scale and shift, y = x * scale + shift.
  Tensor scale = to(rsqrt(add(running_var, eps)), x.dtype());
  if (weight.defined()) scale = mul(scale, weight);
  Tensor shift = neg(mul(to(running_mean, x.dtype()), scale));
  if (bias.defined()) shift = add(shift, bias);
  return add(mul(x, channel_view(scale, x.dim())), channel_view(shift, x.dim()));
}

}  // namespace skiff
