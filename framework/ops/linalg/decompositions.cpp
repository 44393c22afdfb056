// Dense decompositions on batches of square matrices: solve, inverse, cholesky, det.
// The kernels (Eigen, float32/float64) live in backends/cpu/kernels/linalg/decompositions.cpp;
// the backward formulas below use only matmul, solve, inverse and element-wise ops, so
// they are differentiable again.
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/linalg/linalg.h"
#include "framework/ops/linalg/linalg_internal.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

Tensor mT(const Tensor& x) { return transpose(x, -1, -2); }

void check_square(const Tensor& a, const char* op) {
  SKIFF_CHECK_SHAPE(a.dim() >= 2 && a.shape()[a.dim() - 1] == a.shape()[a.dim() - 2],
                    "{}: expected square matrices A [..., n, n], got A {}", op, a.shape());
  SKIFF_CHECK_DTYPE(a.dtype() == DType::Float32 || a.dtype() == DType::Float64,
                    "{}: expected float32 or float64 input, got {}", op, dtype_name(a.dtype()));
}

// ---- solve: A [B..., n, n], B [B..., n, k] (equal batch dims; the wrapper broadcasts) ----
std::vector<TensorMeta> solve_infer(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[1].shape(), in[1].dtype()}};
}
const OpDef& solve_def();
Tensor solve_primitive(const Tensor& a, const Tensor& b) { return call_op1(solve_def(), {a, b}); }
// X = A^-1 B: dB = A^-T g, dA = -dB X^T.
std::vector<Tensor> solve_backward(BackwardContext& ctx) {
  Tensor gb = solve_primitive(mT(ctx.input(0)), ctx.grad());
  Tensor ga;
  if (ctx.needs_grad(0)) ga = neg(detail::matmul_primitive(gb, mT(ctx.output(0))));
  return {ga, ctx.needs_grad(1) ? gb : Tensor()};
}
const OpDef kSolve{.name = "solve", .infer = solve_infer, .backward = solve_backward, .save_inputs = 0b01,
                   .save_outputs = 0b1};
SKIFF_REGISTER_OP(kSolve);
const OpDef& solve_def() { return kSolve; }

// ---- inverse ----
std::vector<Tensor> inverse_backward(BackwardContext& ctx) {
  Tensor y_t = mT(ctx.output(0));
  return {neg(detail::matmul_primitive(detail::matmul_primitive(y_t, ctx.grad()), y_t))};
}
const OpDef kInverse{.name = "inverse", .infer = infer_same_as_input, .backward = inverse_backward,
                     .save_outputs = 0b1};
SKIFF_REGISTER_OP(kInverse);

// ---- cholesky ----
// Constant [n, n] mask of the lower triangle (diagonal included when `with_diagonal`).
Tensor lower_mask(int64_t n, bool with_diagonal, DType dtype) {
  std::vector<double> m(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) m[size_t(i * n + j)] = (j < i || with_diagonal) ? 1.0 : 0.0;
  return to(from_vector(m, {n, n}), dtype);
}
// A = L L^T (Murray 2016, "Differentiation of the Cholesky decomposition"):
// with P = L^T gL, M = (tril(P) + tril(P, -1)^T) / 2 (symmetric, half the diagonal),
// dA = L^-T M L^-1.
std::vector<Tensor> cholesky_backward(BackwardContext& ctx) {
  Tensor l = ctx.output(0);
  const int64_t n = l.shape().back();
  Tensor p = detail::matmul_primitive(mT(l), ctx.grad());
  Tensor sym = mul(add(mul(p, lower_mask(n, true, p.dtype())), mT(mul(p, lower_mask(n, false, p.dtype())))), 0.5);
  Tensor l_inv = inverse(l);
  return {detail::matmul_primitive(detail::matmul_primitive(mT(l_inv), sym), l_inv)};
}
const OpDef kCholesky{.name = "cholesky", .infer = infer_same_as_input, .backward = cholesky_backward,
                      .save_outputs = 0b1};
SKIFF_REGISTER_OP(kCholesky);

// ---- det ----
std::vector<TensorMeta> det_infer(const std::vector<Tensor>& in, const Attrs&) {
  const Shape& s = in[0].shape();
  return {{Shape(s.begin(), s.end() - 2), in[0].dtype()}};
}
// d det(A) = det(A) A^-T.
std::vector<Tensor> det_backward(BackwardContext& ctx) {
  Tensor scale = unsqueeze(unsqueeze(mul(ctx.grad(), ctx.output(0)), -1), -1);
  return {mul(scale, mT(inverse(ctx.input(0))))};
}
const OpDef kDet{.name = "det", .infer = det_infer, .backward = det_backward, .save_inputs = 0b1,
                 .save_outputs = 0b1};
SKIFF_REGISTER_OP(kDet);

}  // namespace

Tensor solve(const Tensor& a, const Tensor& b) {
  check_square(a, "solve");
  SKIFF_CHECK_DTYPE(is_floating(b.dtype()) || is_integral(b.dtype()), "solve: expected a real B, got {}",
                    dtype_name(b.dtype()));
  const int64_t n = a.shape().back();
  Shape a_rows(a.shape().begin(), a.shape().end() - 1);
  const bool vector_rhs = b.dim() == 1 || (b.dim() == a.dim() - 1 && b.shape() == a_rows);
  Tensor rhs = vector_rhs ? unsqueeze(b, -1) : b;
  SKIFF_CHECK_SHAPE(rhs.dim() >= 2 && rhs.shape()[rhs.dim() - 2] == n,
                    "solve: expected B [..., n, k] or [..., n] with n = {}, got A {} and B {}", n, a.shape(),
                    b.shape());
  Shape batch = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                                 Shape(rhs.shape().begin(), rhs.shape().end() - 2), "solve");
  Shape a_shape = batch, b_shape = batch;
  a_shape.push_back(n);
  a_shape.push_back(n);
  b_shape.push_back(n);
  b_shape.push_back(rhs.shape().back());
  const DType t = a.dtype() == DType::Float64 || b.dtype() == DType::Float64 ? DType::Float64 : a.dtype();
  Tensor x = solve_primitive(expand(to(a, t), a_shape), expand(to(rhs, t), b_shape));
  return vector_rhs ? squeeze(x, -1) : x;
}

Tensor inverse(const Tensor& a) {
  check_square(a, "inverse");
  return call_op1(kInverse, {a});
}

Tensor cholesky(const Tensor& a) {
  check_square(a, "cholesky");
  return call_op1(kCholesky, {a});
}

Tensor det(const Tensor& a) {
  check_square(a, "det");
  return call_op1(kDet, {a});
}

}  // namespace skiff
