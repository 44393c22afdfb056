// Binary element-wise op definitions and their gradients.
#include "framework/ops/elementwise/binary.h"

#include "framework/ops/common.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/fft/complex.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

// Gradient of a broadcast input: sum back to its shape, in its dtype.
Tensor reduce_grad(const Tensor& g, const BackwardContext& ctx, int i) {
  return sum_to(g, ctx.input_meta(i).shape);
}

std::vector<Tensor> add_backward(BackwardContext& ctx) {
  return {ctx.needs_grad(0) ? reduce_grad(ctx.grad(), ctx, 0) : Tensor(),
          ctx.needs_grad(1) ? reduce_grad(ctx.grad(), ctx, 1) : Tensor()};
}
std::vector<Tensor> sub_backward(BackwardContext& ctx) {
  return {ctx.needs_grad(0) ? reduce_grad(ctx.grad(), ctx, 0) : Tensor(),
          ctx.needs_grad(1) ? reduce_grad(neg(ctx.grad()), ctx, 1) : Tensor()};
}
// Complex operands follow PyTorch's convention (fft/complex.h): grad_in = grad * conj(f'(z)).
// conj() is the identity for real tensors, so the real formulas are unchanged.
std::vector<Tensor> mul_backward(BackwardContext& ctx) {
  const Tensor& g = ctx.grad();
  return {ctx.needs_grad(0) ? reduce_grad(mul(g, conj(ctx.input(1))), ctx, 0) : Tensor(),
          ctx.needs_grad(1) ? reduce_grad(mul(g, conj(ctx.input(0))), ctx, 1) : Tensor()};
}
std::vector<Tensor> div_backward(BackwardContext& ctx) {
  const Tensor& g = ctx.grad();
  Tensor b = conj(ctx.input(1));
  Tensor ga, gb;
  if (ctx.needs_grad(0)) ga = reduce_grad(div(g, b), ctx, 0);
  if (ctx.needs_grad(1)) gb = reduce_grad(neg(div(mul(g, conj(ctx.input(0))), mul(b, b))), ctx, 1);
  return {ga, gb};
}
std::vector<Tensor> pow_backward(BackwardContext& ctx) {
  const Tensor& g = ctx.grad();
  Tensor a = ctx.input(0), b = ctx.input(1);
  Tensor ga, gb;
  if (ctx.needs_grad(0)) ga = reduce_grad(mul(g, mul(b, pow(a, sub(b, 1.0)))), ctx, 0);
  if (ctx.needs_grad(1)) {
    // d/db a^b = a^b log(a); defined as 0 where a == 0 (the limit for b > 0).
    Tensor safe_log = where(eq(a, 0.0), zeros({}, a.dtype()), log(a));
    gb = reduce_grad(mul(g, mul(pow(a, b), safe_log)), ctx, 1);
  }
  return {ga, gb};
}
// max/min: the gradient goes to the selected input; ties share it equally.
std::vector<Tensor> minmax_backward(BackwardContext& ctx, bool is_max) {
  const Tensor& g = ctx.grad();
  Tensor a = ctx.input(0), b = ctx.input(1);
  Tensor wa = add(to(is_max ? gt(a, b) : lt(a, b), g.dtype()), mul(to(eq(a, b), g.dtype()), 0.5));
  return {ctx.needs_grad(0) ? reduce_grad(mul(g, wa), ctx, 0) : Tensor(),
          ctx.needs_grad(1) ? reduce_grad(mul(g, sub(1.0, wa)), ctx, 1) : Tensor()};
}
std::vector<Tensor> maximum_backward(BackwardContext& ctx) { return minmax_backward(ctx, true); }
std::vector<Tensor> minimum_backward(BackwardContext& ctx) { return minmax_backward(ctx, false); }

std::vector<Tensor> where_backward(BackwardContext& ctx) {
  const Tensor& g = ctx.grad();
  Tensor c = ctx.input(0);
  Tensor z = zeros({}, g.dtype());
  return {Tensor(), ctx.needs_grad(1) ? reduce_grad(where(c, g, z), ctx, 1) : Tensor(),
          ctx.needs_grad(2) ? reduce_grad(where(c, z, g), ctx, 2) : Tensor()};
}

std::vector<TensorMeta> where_infer(const std::vector<Tensor>& in, const Attrs&) {
  SKIFF_CHECK_DTYPE(in[0].dtype() == DType::Bool, "where: condition must be bool, got {}", dtype_name(in[0].dtype()));
  Shape s = broadcast_shapes(broadcast_shapes(in[0].shape(), in[1].shape(), "where"), in[2].shape(), "where");
  return {{s, in[1].dtype()}};
}

const OpDef kAdd{.name = "add", .infer = infer_broadcast, .backward = add_backward};
const OpDef kSub{.name = "sub", .infer = infer_broadcast, .backward = sub_backward};
const OpDef kMul{.name = "mul", .infer = infer_broadcast, .backward = mul_backward, .save_inputs = 0b11};
const OpDef kDiv{.name = "div", .infer = infer_broadcast, .backward = div_backward, .save_inputs = 0b11};
const OpDef kPow{.name = "pow", .infer = infer_broadcast, .backward = pow_backward, .save_inputs = 0b11};
const OpDef kMaximum{.name = "maximum", .infer = infer_broadcast, .backward = maximum_backward, .save_inputs = 0b11};
const OpDef kMinimum{.name = "minimum", .infer = infer_broadcast, .backward = minimum_backward, .save_inputs = 0b11};
const OpDef kWhere{.name = "where", .infer = where_infer, .backward = where_backward, .save_inputs = 0b001,
                   .dispatch_input = 1};
const OpDef kEq{.name = "eq", .infer = infer_broadcast_bool};
const OpDef kNe{.name = "ne", .infer = infer_broadcast_bool};
const OpDef kLt{.name = "lt", .infer = infer_broadcast_bool};
const OpDef kLe{.name = "le", .infer = infer_broadcast_bool};
const OpDef kGt{.name = "gt", .infer = infer_broadcast_bool};
const OpDef kGe{.name = "ge", .infer = infer_broadcast_bool};
const OpDef kLogicalAnd{.name = "logical_and", .infer = infer_broadcast_bool};
const OpDef kLogicalOr{.name = "logical_or", .infer = infer_broadcast_bool};
const OpDef kLogicalXor{.name = "logical_xor", .infer = infer_broadcast_bool};
const OpDef kLogicalNot{.name = "logical_not", .infer = infer_broadcast_bool};
SKIFF_REGISTER_OP(kAdd);
SKIFF_REGISTER_OP(kSub);
SKIFF_REGISTER_OP(kMul);
SKIFF_REGISTER_OP(kDiv);
SKIFF_REGISTER_OP(kPow);
SKIFF_REGISTER_OP(kMaximum);
SKIFF_REGISTER_OP(kMinimum);
SKIFF_REGISTER_OP(kWhere);
SKIFF_REGISTER_OP(kEq);
SKIFF_REGISTER_OP(kNe);
SKIFF_REGISTER_OP(kLt);
SKIFF_REGISTER_OP(kLe);
SKIFF_REGISTER_OP(kGt);
SKIFF_REGISTER_OP(kGe);
SKIFF_REGISTER_OP(kLogicalAnd);
SKIFF_REGISTER_OP(kLogicalOr);
SKIFF_REGISTER_OP(kLogicalXor);
SKIFF_REGISTER_OP(kLogicalNot);

Tensor promoted(const OpDef& op, const Tensor& a, const Tensor& b) {
  DType t = promote_types(a.dtype(), b.dtype());
  return call_op1(op, {to(a, t), to(b, t)});
}

// Comparisons compare in the promoted type; logical ops compare as bool.
Tensor as_bool(const Tensor& x) { return to(x, DType::Bool); }

Tensor& inplace(const OpDef& op, Tensor& a, const Tensor& b) {
  Tensor bb = to(b, promote_types(a.dtype(), b.dtype()));
  Tensor aa = to(a, bb.dtype());
  std::vector<Tensor> in{aa, bb};
  return call_op_inplace(op, a, in);
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) { return promoted(kAdd, a, b); }
Tensor sub(const Tensor& a, const Tensor& b) { return promoted(kSub, a, b); }
Tensor mul(const Tensor& a, const Tensor& b) { return promoted(kMul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) {
  DType t = promote_types(a.dtype(), b.dtype());
  if (!is_differentiable(t)) t = DType::Float32;
  return call_op1(kDiv, {to(a, t), to(b, t)});
}
Tensor pow(const Tensor& a, const Tensor& b) { return promoted(kPow, a, b); }
Tensor pow(const Tensor& a, double e) {
  if (e == 1.0) return a;
  if (e == 2.0) return mul(a, a);
  return pow(a, scalar_like(a, e));
}
Tensor maximum(const Tensor& a, const Tensor& b) { return promoted(kMaximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return promoted(kMinimum, a, b); }

Tensor add(const Tensor& a, double b) { return add(a, scalar_like(a, b)); }
Tensor sub(const Tensor& a, double b) { return sub(a, scalar_like(a, b)); }
Tensor mul(const Tensor& a, double b) { return mul(a, scalar_like(a, b)); }
Tensor div(const Tensor& a, double b) { return div(a, scalar_like(a, b)); }
Tensor sub(double a, const Tensor& b) { return sub(scalar_like(b, a), b); }
Tensor operator-(double a, const Tensor& b) { return sub(a, b); }
Tensor operator/(double a, const Tensor& b) { return div(scalar_like(b, a), b); }
Tensor operator-(const Tensor& a) { return neg(a); }

Tensor eq(const Tensor& a, const Tensor& b) { return promoted(kEq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return promoted(kNe, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return promoted(kLt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return promoted(kLe, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return promoted(kGt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return promoted(kGe, a, b); }
Tensor eq(const Tensor& a, double b) { return eq(a, scalar_like(a, b)); }
Tensor ne(const Tensor& a, double b) { return ne(a, scalar_like(a, b)); }
Tensor lt(const Tensor& a, double b) { return lt(a, scalar_like(a, b)); }
Tensor le(const Tensor& a, double b) { return le(a, scalar_like(a, b)); }
Tensor gt(const Tensor& a, double b) { return gt(a, scalar_like(a, b)); }
Tensor ge(const Tensor& a, double b) { return ge(a, scalar_like(a, b)); }

Tensor logical_and(const Tensor& a, const Tensor& b) { return call_op1(kLogicalAnd, {as_bool(a), as_bool(b)}); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return call_op1(kLogicalOr, {as_bool(a), as_bool(b)}); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return call_op1(kLogicalXor, {as_bool(a), as_bool(b)}); }
Tensor logical_not(const Tensor& a) { return call_op1(kLogicalNot, {as_bool(a)}); }

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  DType t = promote_types(a.dtype(), b.dtype());
  return call_op1(kWhere, {cond, to(a, t), to(b, t)});
}
Tensor where(const Tensor& cond, const Tensor& a, double b) { return where(cond, a, scalar_like(a, b)); }
Tensor where(const Tensor& cond, double a, const Tensor& b) { return where(cond, scalar_like(b, a), b); }

Tensor& add_(Tensor& a, const Tensor& b) { return inplace(kAdd, a, b); }
Tensor& sub_(Tensor& a, const Tensor& b) { return inplace(kSub, a, b); }
Tensor& mul_(Tensor& a, const Tensor& b) { return inplace(kMul, a, b); }
Tensor& div_(Tensor& a, const Tensor& b) { return inplace(kDiv, a, b); }
Tensor& add_(Tensor& a, double b) { return add_(a, scalar_like(a, b)); }
Tensor& mul_(Tensor& a, double b) { return mul_(a, scalar_like(a, b)); }

}  // namespace skiff
