// ONNX lowerings of the element-wise ops (framework/ops/elementwise/).
#include <cmath>

#include "framework/graph/lowering.h"

namespace skiff::graph {
namespace {

/// One ONNX node on the input; the output keeps its shape.
LoweringFn unary(std::string onnx_type) {
  return [onnx_type](LoweringContext& c) { c.set_output(0, c.node(onnx_type, {c.value(0)}, {}), c.flags(0)); };
}

/// One ONNX node on the inputs, which broadcast.
LoweringFn broadcasting(std::string onnx_type) {
  return [onnx_type](LoweringContext& c) {
    c.set_output(0, c.node(onnx_type, c.values(), {}), broadcast_flags(c.flags(), size_t(c.output(0).dim())));
  };
}

void lower_ne(LoweringContext& c) {
  c.set_output(0, c.node("Not", {c.node("Equal", c.values(), {})}, {}),
               broadcast_flags(c.flags(), size_t(c.output(0).dim())));
}

void lower_rsqrt(LoweringContext& c) {
  c.set_output(0, c.node("Reciprocal", {c.node("Sqrt", {c.value(0)}, {})}, {}), c.flags(0));
}

void lower_square(LoweringContext& c) { c.set_output(0, c.node("Mul", {c.value(0), c.value(0)}, {}), c.flags(0)); }

void lower_log1p(LoweringContext& c) {
  std::string plus_one = c.node("Add", {c.value(0), c.const_scalar(1.0, c.input(0).dtype())}, {});
  c.set_output(0, c.node("Log", {plus_one}, {}), c.flags(0));
}

void lower_leaky_relu(LoweringContext& c) {
  c.set_output(0, c.node("LeakyRelu", {c.value(0)}, {{"alpha", float(c.attrs().get_float("negative_slope"))}}),
               c.flags(0));
}

/// Clip with an omitted bound for an infinite one.
void lower_clamp(LoweringContext& c) {
  const double lo = c.attrs().get_float("min"), hi = c.attrs().get_float("max");
  const DType dtype = c.input(0).dtype();
  c.set_output(0,
               c.node("Clip",
                      {c.value(0), std::isinf(lo) ? "" : c.const_scalar(lo, dtype),
                       std::isinf(hi) ? "" : c.const_scalar(hi, dtype)},
                      {}),
               c.flags(0));
}

}  // namespace

SKIFF_REGISTER_LOWERING(neg, unary("Neg"));
SKIFF_REGISTER_LOWERING(abs, unary("Abs"));
SKIFF_REGISTER_LOWERING(sign, unary("Sign"));
SKIFF_REGISTER_LOWERING(exp, unary("Exp"));
SKIFF_REGISTER_LOWERING(log, unary("Log"));
SKIFF_REGISTER_LOWERING(sqrt, unary("Sqrt"));
SKIFF_REGISTER_LOWERING(reciprocal, unary("Reciprocal"));
SKIFF_REGISTER_LOWERING(sin, unary("Sin"));
SKIFF_REGISTER_LOWERING(cos, unary("Cos"));
SKIFF_REGISTER_LOWERING(tan, unary("Tan"));
SKIFF_REGISTER_LOWERING(tanh, unary("Tanh"));
SKIFF_REGISTER_LOWERING(sigmoid, unary("Sigmoid"));
SKIFF_REGISTER_LOWERING(erf, unary("Erf"));
SKIFF_REGISTER_LOWERING(floor, unary("Floor"));
SKIFF_REGISTER_LOWERING(ceil, unary("Ceil"));
SKIFF_REGISTER_LOWERING(round, unary("Round"));
SKIFF_REGISTER_LOWERING(relu, unary("Relu"));
SKIFF_REGISTER_LOWERING(hardswish, unary("HardSwish"));
SKIFF_REGISTER_LOWERING(logical_not, unary("Not"));
SKIFF_REGISTER_LOWERING(rsqrt, lower_rsqrt);
SKIFF_REGISTER_LOWERING(square, lower_square);
SKIFF_REGISTER_LOWERING(log1p, lower_log1p);
SKIFF_REGISTER_LOWERING(leaky_relu, lower_leaky_relu);
SKIFF_REGISTER_LOWERING(clamp, lower_clamp);

SKIFF_REGISTER_LOWERING(add, broadcasting("Add"));
SKIFF_REGISTER_LOWERING(sub, broadcasting("Sub"));
SKIFF_REGISTER_LOWERING(mul, broadcasting("Mul"));
SKIFF_REGISTER_LOWERING(div, broadcasting("Div"));
SKIFF_REGISTER_LOWERING(pow, broadcasting("Pow"));
SKIFF_REGISTER_LOWERING(maximum, broadcasting("Max"));
SKIFF_REGISTER_LOWERING(minimum, broadcasting("Min"));
SKIFF_REGISTER_LOWERING(eq, broadcasting("Equal"));
SKIFF_REGISTER_LOWERING(ne, lower_ne);
SKIFF_REGISTER_LOWERING(lt, broadcasting("Less"));
SKIFF_REGISTER_LOWERING(le, broadcasting("LessOrEqual"));
SKIFF_REGISTER_LOWERING(gt, broadcasting("Greater"));
SKIFF_REGISTER_LOWERING(ge, broadcasting("GreaterOrEqual"));
SKIFF_REGISTER_LOWERING(logical_and, broadcasting("And"));
SKIFF_REGISTER_LOWERING(logical_or, broadcasting("Or"));
SKIFF_REGISTER_LOWERING(logical_xor, broadcasting("Xor"));
SKIFF_REGISTER_LOWERING(where, broadcasting("Where"));

SKIFF_NOT_EXPORTABLE(relu_backward, "'relu_backward' is the gradient of relu; export traces inference");
SKIFF_NOT_EXPORTABLE(hardswish_backward, "'hardswish_backward' is the gradient of hardswish; export traces inference");

}  // namespace skiff::graph
