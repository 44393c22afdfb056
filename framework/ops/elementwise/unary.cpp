// Unary element-wise op definitions, their gradients, and composite activations.
#include "framework/ops/elementwise/unary.h"

#include <cmath>

#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/fft/complex.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

constexpr uint32_t kIn = 1, kOut = 1;
Tensor g(BackwardContext& c) { return c.grad(); }

std::vector<Tensor> neg_bw(BackwardContext& c) { return {neg(g(c))}; }
// Complex z: d|z| pulls back to grad * z / |z| (complex.h convention), 0 at z = 0.
std::vector<Tensor> abs_bw(BackwardContext& c) {
  Tensor x = c.input(0);
  if (!is_complex(x.dtype())) return {mul(g(c), sign(x))};
  Tensor a = abs(x);
  Tensor safe = where(eq(a, 0.0), scalar_like(a, 1.0), a);
  return {mul(to(g(c), x.dtype()), div(x, safe))};
}
std::vector<TensorMeta> abs_infer(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[0].shape(), to_real(in[0].dtype())}};
}
std::vector<Tensor> zero_bw(BackwardContext& c) { return {zeros(c.input_meta(0).shape, c.input_meta(0).dtype)}; }
std::vector<Tensor> exp_bw(BackwardContext& c) { return {mul(g(c), c.output(0))}; }
std::vector<Tensor> log_bw(BackwardContext& c) { return {div(g(c), c.input(0))}; }
std::vector<Tensor> log1p_bw(BackwardContext& c) { return {div(g(c), add(c.input(0), 1.0))}; }
std::vector<Tensor> sqrt_bw(BackwardContext& c) { return {div(mul(g(c), 0.5), c.output(0))}; }
std::vector<Tensor> rsqrt_bw(BackwardContext& c) {
  Tensor y = c.output(0);
  return {mul(mul(g(c), -0.5), mul(y, mul(y, y)))};
}
std::vector<Tensor> square_bw(BackwardContext& c) { return {mul(g(c), mul(c.input(0), 2.0))}; }
std::vector<Tensor> reciprocal_bw(BackwardContext& c) {
  Tensor y = c.output(0);
  return {neg(mul(g(c), mul(y, y)))};
}
std::vector<Tensor> sin_bw(BackwardContext& c) { return {mul(g(c), cos(c.input(0)))}; }
std::vector<Tensor> cos_bw(BackwardContext& c) { return {neg(mul(g(c), sin(c.input(0))))}; }
std::vector<Tensor> tan_bw(BackwardContext& c) {
  Tensor y = c.output(0);
  return {mul(g(c), add(mul(y, y), 1.0))};
}
std::vector<Tensor> tanh_bw(BackwardContext& c) {
  Tensor y = c.output(0);
  return {mul(g(c), sub(1.0, mul(y, y)))};
}
std::vector<Tensor> sigmoid_bw(BackwardContext& c) {
  Tensor y = c.output(0);
  return {mul(g(c), mul(y, sub(1.0, y)))};
}
std::vector<Tensor> erf_bw(BackwardContext& c) {
  Tensor x = c.input(0);
  return {mul(g(c), mul(exp(neg(mul(x, x))), 1.1283791670955126))};  // 2/sqrt(pi)
}
std::vector<Tensor> relu_bw(BackwardContext& c) { return {relu_backward(g(c), c.output(0))}; }
std::vector<Tensor> leaky_relu_bw(BackwardContext& c) {
  double slope = c.attrs().get_float("negative_slope");
  return {where(gt(c.input(0), 0.0), g(c), mul(g(c), slope))};
}
std::vector<Tensor> clamp_bw(BackwardContext& c) {
  Tensor x = c.input(0);
  double lo = c.attrs().get_float("min"), hi = c.attrs().get_float("max");
  Tensor inside = logical_and(ge(x, lo), le(x, hi));
  return {where(inside, g(c), zeros({}, g(c).dtype()))};
}

// hardswish(x) = x * relu6(x + 3) / 6 is one op (not its four-op composite) so
// training a MobileNet-family network keeps one activation tensor per layer.
// Its derivative: 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above.
Tensor hardswish_backward(const Tensor& grad, const Tensor& x);
std::vector<Tensor> hardswish_bw(BackwardContext& c) { return {hardswish_backward(g(c), c.input(0))}; }
// hardswish_backward(grad, x) is linear in grad; its x-derivative is grad / 3 on (-3, 3).
std::vector<Tensor> hardswish_backward_bw(BackwardContext& c) {
  Tensor x = c.input(1);
  Tensor gg = c.grad();
  Tensor inside = logical_and(gt(x, -3.0), lt(x, 3.0));
  return {c.needs_grad(0) ? hardswish_backward(gg, x) : Tensor(),
          c.needs_grad(1) ? where(inside, mul(mul(gg, c.input(0)), 1.0 / 3.0), zeros({}, gg.dtype())) : Tensor()};
}

#define SKIFF_UNARY_OP(var, opname, bw, sin_, sout) \
  const OpDef var{.name = opname, .infer = infer_same_as_input, .backward = bw, .save_inputs = sin_, .save_outputs = sout}; \
  SKIFF_REGISTER_OP(var)

SKIFF_UNARY_OP(kNeg, "neg", neg_bw, 0, 0);
SKIFF_UNARY_OP(kSign, "sign", zero_bw, 0, 0);
SKIFF_UNARY_OP(kExp, "exp", exp_bw, 0, kOut);
SKIFF_UNARY_OP(kLog, "log", log_bw, kIn, 0);
SKIFF_UNARY_OP(kLog1p, "log1p", log1p_bw, kIn, 0);
SKIFF_UNARY_OP(kSqrt, "sqrt", sqrt_bw, 0, kOut);
SKIFF_UNARY_OP(kRsqrt, "rsqrt", rsqrt_bw, 0, kOut);
SKIFF_UNARY_OP(kSquare, "square", square_bw, kIn, 0);
SKIFF_UNARY_OP(kReciprocal, "reciprocal", reciprocal_bw, 0, kOut);
SKIFF_UNARY_OP(kSin, "sin", sin_bw, kIn, 0);
SKIFF_UNARY_OP(kCos, "cos", cos_bw, kIn, 0);
SKIFF_UNARY_OP(kTan, "tan", tan_bw, 0, kOut);
SKIFF_UNARY_OP(kTanh, "tanh", tanh_bw, 0, kOut);
SKIFF_UNARY_OP(kSigmoid, "sigmoid", sigmoid_bw, 0, kOut);
SKIFF_UNARY_OP(kErf, "erf", erf_bw, kIn, 0);
SKIFF_UNARY_OP(kFloor, "floor", zero_bw, 0, 0);
SKIFF_UNARY_OP(kCeil, "ceil", zero_bw, 0, 0);
SKIFF_UNARY_OP(kRound, "round", zero_bw, 0, 0);
SKIFF_UNARY_OP(kRelu, "relu", relu_bw, 0, kOut);
SKIFF_UNARY_OP(kLeakyRelu, "leaky_relu", leaky_relu_bw, kIn, 0);
SKIFF_UNARY_OP(kClamp, "clamp", clamp_bw, kIn, 0);
SKIFF_UNARY_OP(kHardswish, "hardswish", hardswish_bw, kIn, 0);
#undef SKIFF_UNARY_OP
// relu_backward(grad, y) = grad where y > 0, else 0: linear in grad, so its own gradient
// is relu_backward again (and none for y, whose derivative is zero almost everywhere).
std::vector<Tensor> relu_backward_bw(BackwardContext& c) {
  return {c.needs_grad(0) ? relu_backward(c.grad(), c.input(1)) : Tensor(), Tensor()};
}
std::vector<TensorMeta> relu_backward_infer(const std::vector<Tensor>& in, const Attrs&) {
  SKIFF_CHECK_SHAPE(in[0].shape() == in[1].shape(), "relu_backward: grad {} and output {} must have one shape",
                    in[0].shape(), in[1].shape());
  SKIFF_CHECK_DTYPE(in[0].dtype() == in[1].dtype(), "relu_backward: grad is {}, output is {}",
                    dtype_name(in[0].dtype()), dtype_name(in[1].dtype()));
  return {{in[0].shape(), in[0].dtype()}};
}
const OpDef kReluBackward{
    .name = "relu_backward", .infer = relu_backward_infer, .backward = relu_backward_bw, .save_inputs = 0b10};
SKIFF_REGISTER_OP(kReluBackward);

std::vector<TensorMeta> hardswish_backward_infer(const std::vector<Tensor>& in, const Attrs&) {
  SKIFF_CHECK_SHAPE(in[0].shape() == in[1].shape(), "hardswish_backward: grad {} and input {} must have one shape",
                    in[0].shape(), in[1].shape());
  SKIFF_CHECK_DTYPE(in[0].dtype() == in[1].dtype(), "hardswish_backward: grad is {}, input is {}",
                    dtype_name(in[0].dtype()), dtype_name(in[1].dtype()));
  return {{in[0].shape(), in[0].dtype()}};
}
const OpDef kHardswishBackward{.name = "hardswish_backward",
                               .infer = hardswish_backward_infer,
                               .backward = hardswish_backward_bw,
                               .save_inputs = 0b11};
SKIFF_REGISTER_OP(kHardswishBackward);
Tensor hardswish_backward(const Tensor& grad, const Tensor& x) { return call_op1(kHardswishBackward, {grad, x}); }

// abs maps complex to real (the others keep the dtype).
const OpDef kAbs{.name = "abs", .infer = abs_infer, .backward = abs_bw, .save_inputs = kIn};
SKIFF_REGISTER_OP(kAbs);

/// Float functions promote integer/bool inputs to float32 first.
Tensor float_input(const Tensor& x) { return is_differentiable(x.dtype()) ? x : to(x, DType::Float32); }
Tensor unary(const OpDef& op, const Tensor& x, const Attrs& a = {}) { return call_op1(op, {x}, a); }
Tensor unary_float(const OpDef& op, const Tensor& x, const Attrs& a = {}) { return call_op1(op, {float_input(x)}, a); }

}  // namespace

Tensor neg(const Tensor& x) { return unary(kNeg, x); }
Tensor abs(const Tensor& x) { return unary(kAbs, x); }
Tensor sign(const Tensor& x) { return unary(kSign, x); }
Tensor exp(const Tensor& x) { return unary_float(kExp, x); }
Tensor log(const Tensor& x) { return unary_float(kLog, x); }
Tensor log1p(const Tensor& x) { return unary_float(kLog1p, x); }
Tensor sqrt(const Tensor& x) { return unary_float(kSqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary_float(kRsqrt, x); }
Tensor square(const Tensor& x) { return unary(kSquare, x); }
Tensor reciprocal(const Tensor& x) { return unary_float(kReciprocal, x); }
Tensor sin(const Tensor& x) { return unary_float(kSin, x); }
Tensor cos(const Tensor& x) { return unary_float(kCos, x); }
Tensor tan(const Tensor& x) { return unary_float(kTan, x); }
Tensor tanh(const Tensor& x) { return unary_float(kTanh, x); }
Tensor sigmoid(const Tensor& x) { return unary_float(kSigmoid, x); }
Tensor erf(const Tensor& x) { return unary_float(kErf, x); }
Tensor floor(const Tensor& x) { return is_integral(x.dtype(), true) ? x : unary(kFloor, x); }
Tensor ceil(const Tensor& x) { return is_integral(x.dtype(), true) ? x : unary(kCeil, x); }
Tensor round(const Tensor& x) { return is_integral(x.dtype(), true) ? x : unary(kRound, x); }
Tensor relu(const Tensor& x) { return unary(kRelu, x); }
Tensor relu_backward(const Tensor& grad, const Tensor& output) { return call_op1(kReluBackward, {grad, output}); }
Tensor leaky_relu(const Tensor& x, double slope) { return unary_float(kLeakyRelu, x, {{"negative_slope", slope}}); }
Tensor clamp(const Tensor& x, double lo, double hi) {
  SKIFF_CHECK(!(lo > hi), "clamp: min {} is greater than max {}", lo, hi);
  return unary(kClamp, x, {{"min", lo}, {"max", hi}});
}
Tensor clamp_min(const Tensor& x, double lo) { return clamp(x, lo, INFINITY); }
Tensor clamp_max(const Tensor& x, double hi) { return clamp(x, -INFINITY, hi); }
Tensor relu6(const Tensor& x) { return clamp(x, 0.0, 6.0); }

// Composites: their gradients come from the primitives.
Tensor gelu(const Tensor& x0, bool tanh_approximation) {
  Tensor x = float_input(x0);
  if (tanh_approximation) {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Tensor inner = mul(add(x, mul(mul(x, mul(x, x)), 0.044715)), 0.7978845608028654);
    return mul(mul(x, 0.5), add(tanh(inner), 1.0));
  }
  return mul(mul(x, 0.5), add(erf(mul(x, 0.7071067811865476)), 1.0));
}
Tensor silu(const Tensor& x) { return mul(x, sigmoid(x)); }
Tensor hardsigmoid(const Tensor& x) { return clamp(add(div(float_input(x), 6.0), 0.5), 0.0, 1.0); }
Tensor hardswish(const Tensor& x) { return unary_float(kHardswish, x); }
Tensor softplus(const Tensor& x0, double beta, double threshold) {
  Tensor x = float_input(x0);
  Tensor bx = mul(x, beta);
  // log1p(exp(bx)) overflows for large bx; past the threshold softplus is x itself.
  Tensor safe = minimum(bx, scalar_like(bx, threshold));
  return where(gt(bx, threshold), x, div(log1p(exp(safe)), beta));
}

Tensor& relu_(Tensor& x) { return call_op_inplace(kRelu, x, {x}); }
Tensor& clamp_(Tensor& x, double lo, double hi) { return call_op_inplace(kClamp, x, {x}, {{"min", lo}, {"max", hi}}); }
Tensor& neg_(Tensor& x) { return call_op_inplace(kNeg, x, {x}); }
Tensor& exp_(Tensor& x) { return call_op_inplace(kExp, x, {x}); }

}  // namespace skiff
