// Element-wise ONNX ops: arithmetic with NumPy broadcasting, comparisons,
// logic, activations.
#include "framework/graph/ops/common.h"

namespace skiff::graph::ops {
namespace {



std::vector<Tensor> add_op(const OpContext& c) { return one(add(c.input(0), c.input(1))); }
std::vector<Tensor> sub_op(const OpContext& c) { return one(sub(c.input(0), c.input(1))); }
std::vector<Tensor> mul_op(const OpContext& c) { return one(mul(c.input(0), c.input(1))); }

std::vector<Tensor> div_op(const OpContext& c) {
  const Tensor& a = c.input(0);
  const Tensor& b = c.input(1);
  if (is_integral(a.dtype()) && is_integral(b.dtype())) {
    // ONNX integer division truncates toward zero (C semantics).
    Tensor q = div(to(a, DType::Float64), to(b, DType::Float64));
    Tensor truncated = where(lt(q, 0.0), ceil(q), floor(q));
    return one(to(truncated, a.dtype()));
  }
  return one(div(a, b));
}

std::vector<Tensor> pow_op(const OpContext& c) {
  const Tensor& e = c.input(1);
  // A constant scalar exponent takes the scalar path (exact squares, cheaper backward).
  if (e.numel() == 1 && e.dim() <= 1) return one(pow(c.input(0), e.item<double>()));
  return one(pow(c.input(0), to(e, c.input(0).dtype())));
}

std::vector<Tensor> mod_op(const OpContext& c) {
  const Tensor& a = c.input(0);
  const Tensor& b = c.input(1);
  bool fmod = c.node.attr_int("fmod", 0) != 0;
  Tensor q = div(to(a, DType::Float64), to(b, DType::Float64));
  Tensor whole = fmod ? where(lt(q, 0.0), ceil(q), floor(q)) : floor(q);
  Tensor r = sub(to(a, DType::Float64), mul(whole, to(b, DType::Float64)));
  return one(to(r, a.dtype()));
}

template <Tensor (*F)(const Tensor&, const Tensor&)>
std::vector<Tensor> binary_op(const OpContext& c) {
  return one(F(c.input(0), c.input(1)));
}

template <Tensor (*F)(const Tensor&)>
std::vector<Tensor> unary_op(const OpContext& c) {
  return one(F(c.input(0)));
}

std::vector<Tensor> identity_op(const OpContext& c) { return one(c.input(0)); }

std::vector<Tensor> leaky_relu_op(const OpContext& c) {
  return one(leaky_relu(c.input(0), c.node.attr_float("alpha", 0.01f)));
}

std::vector<Tensor> elu_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  double alpha = c.node.attr_float("alpha", 1.0f);
  return one(where(gt(x, 0.0), x, mul(sub(exp(x), 1.0), alpha)));
}

std::vector<Tensor> prelu_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  return one(add(relu(x), mul(c.input(1), minimum(x, zeros({}, x.dtype())))));
}

std::vector<Tensor> hard_sigmoid_op(const OpContext& c) {
  double alpha = c.node.attr_float("alpha", 0.2f);
  double beta = c.node.attr_float("beta", 0.5f);
  return one(clamp(add(mul(c.input(0), alpha), beta), 0.0, 1.0));
}

std::vector<Tensor> hard_swish_op(const OpContext& c) { return one(hardswish(c.input(0))); }

std::vector<Tensor> softplus_op(const OpContext& c) { return one(softplus(c.input(0))); }

std::vector<Tensor> gelu_op(const OpContext& c) {
  return one(gelu(c.input(0), c.node.attr_string("approximate", "none") == "tanh"));
}

std::vector<Tensor> clip_op(const OpContext& c) {
  const Tensor& x = c.input(0);
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (c.opset < 11) {
    lo = c.node.attr_float("min", -std::numeric_limits<float>::max());
    hi = c.node.attr_float("max", std::numeric_limits<float>::max());
  } else {
    if (c.has(1)) lo = c.scalar(1);
    if (c.has(2)) hi = c.scalar(2);
  }
  return one(clamp(x, lo, hi));
}

// Sum/Max/Min/Mean over any number of broadcast inputs.
template <Tensor (*F)(const Tensor&, const Tensor&)>
std::vector<Tensor> variadic_op(const OpContext& c) {
  Tensor acc = c.input(0);
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = F(acc, c.input(i));
  return one(acc);
}

std::vector<Tensor> mean_op(const OpContext& c) {
  Tensor acc = c.input(0);
  for (size_t i = 1; i < c.num_inputs(); ++i) acc = add(acc, c.input(i));
  return one(div(acc, double(c.num_inputs())));
}

std::vector<Tensor> where_op(const OpContext& c) {
  return one(where(to(c.input(0), DType::Bool), c.input(1), c.input(2)));
}

std::vector<Tensor> not_op(const OpContext& c) { return one(logical_not(c.input(0))); }

SKIFF_REGISTER_GRAPH_OP("Add", add_op);
SKIFF_REGISTER_GRAPH_OP("Sub", sub_op);
SKIFF_REGISTER_GRAPH_OP("Mul", mul_op);
SKIFF_REGISTER_GRAPH_OP("Div", div_op);
SKIFF_REGISTER_GRAPH_OP("Pow", pow_op);
SKIFF_REGISTER_GRAPH_OP("Mod", mod_op);
SKIFF_REGISTER_GRAPH_OP("Equal", binary_op<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(eq)>);
SKIFF_REGISTER_GRAPH_OP("Less", binary_op<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(lt)>);
SKIFF_REGISTER_GRAPH_OP("LessOrEqual", binary_op<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(le)>);
SKIFF_REGISTER_GRAPH_OP("Greater", binary_op<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(gt)>);
SKIFF_REGISTER_GRAPH_OP("GreaterOrEqual", binary_op<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(ge)>);
SKIFF_REGISTER_GRAPH_OP("And", binary_op<logical_and>);
SKIFF_REGISTER_GRAPH_OP("Or", binary_op<logical_or>);
SKIFF_REGISTER_GRAPH_OP("Xor", binary_op<logical_xor>);
SKIFF_REGISTER_GRAPH_OP("Not", not_op);
SKIFF_REGISTER_GRAPH_OP("Where", where_op);
SKIFF_REGISTER_GRAPH_OP("Sum", variadic_op<static_cast<Tensor (*)(const Tensor&, const Tensor&)>(add)>);
SKIFF_REGISTER_GRAPH_OP("Max", variadic_op<maximum>);
SKIFF_REGISTER_GRAPH_OP("Min", variadic_op<minimum>);
SKIFF_REGISTER_GRAPH_OP("Mean", mean_op);
SKIFF_REGISTER_GRAPH_OP("Identity", identity_op);
SKIFF_REGISTER_GRAPH_OP("Relu", unary_op<relu>);
SKIFF_REGISTER_GRAPH_OP("Sigmoid", unary_op<sigmoid>);
SKIFF_REGISTER_GRAPH_OP("Tanh", unary_op<tanh>);
SKIFF_REGISTER_GRAPH_OP("Exp", unary_op<exp>);
SKIFF_REGISTER_GRAPH_OP("Log", unary_op<log>);
SKIFF_REGISTER_GRAPH_OP("Sqrt", unary_op<sqrt>);
SKIFF_REGISTER_GRAPH_OP("Neg", unary_op<neg>);
SKIFF_REGISTER_GRAPH_OP("Abs", unary_op<abs>);
SKIFF_REGISTER_GRAPH_OP("Sign", unary_op<sign>);
SKIFF_REGISTER_GRAPH_OP("Reciprocal", unary_op<reciprocal>);
SKIFF_REGISTER_GRAPH_OP("Floor", unary_op<floor>);
SKIFF_REGISTER_GRAPH_OP("Ceil", unary_op<ceil>);
SKIFF_REGISTER_GRAPH_OP("Round", unary_op<round>);
SKIFF_REGISTER_GRAPH_OP("Erf", unary_op<erf>);
SKIFF_REGISTER_GRAPH_OP("Sin", unary_op<sin>);
SKIFF_REGISTER_GRAPH_OP("Cos", unary_op<cos>);
SKIFF_REGISTER_GRAPH_OP("LeakyRelu", leaky_relu_op);
SKIFF_REGISTER_GRAPH_OP("Elu", elu_op);
SKIFF_REGISTER_GRAPH_OP("PRelu", prelu_op);
SKIFF_REGISTER_GRAPH_OP("HardSigmoid", hard_sigmoid_op);
SKIFF_REGISTER_GRAPH_OP("HardSwish", hard_swish_op);
SKIFF_REGISTER_GRAPH_OP("Softplus", softplus_op);
SKIFF_REGISTER_GRAPH_OP("Gelu", gelu_op);
SKIFF_REGISTER_GRAPH_OP("Clip", clip_op);

}  // namespace
}  // namespace skiff::graph::ops
