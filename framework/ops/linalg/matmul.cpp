// Matrix products: the batched, broadcasting matmul primitive and the wrappers built on
// it (NumPy matmul, bmm, linear, dot, outer).
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/fft/complex.h"
#include "framework/ops/linalg/linalg.h"
#include "framework/ops/linalg/linalg_internal.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

Shape batch_dims(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

// The primitive: a [Ba..., M, K] x b [Bb..., K, N] -> [broadcast(Ba, Bb)..., M, N]; both at least 2-D
// and of one dtype (the public wrappers promote and reshape).
std::vector<TensorMeta> matmul_infer(const std::vector<Tensor>& in, const Attrs&) {
  const Shape &sa = in[0].shape(), &sb = in[1].shape();
  SKIFF_ASSERT(sa.size() >= 2 && sb.size() >= 2 && in[0].dtype() == in[1].dtype(),
               "matmul primitive called with {} {} and {} {}", sa, dtype_name(in[0].dtype()), sb,
               dtype_name(in[1].dtype()));
  SKIFF_CHECK_SHAPE(sa[sa.size() - 1] == sb[sb.size() - 2],
                    "matmul: expected a [..., M, K] and b [..., K, N] with the same K, got a {} and b {}", sa, sb);
  Shape ba = batch_dims(sa), bb = batch_dims(sb);
  Shape out;
  const int64_t nb = std::max(ba.size(), bb.size());
  for (int64_t d = 0; d < nb; ++d) {
    const int64_t da = d - (nb - ba.size()), db = d - (nb - bb.size());
    const int64_t xa = da >= 0 ? ba[da] : 1, xb = db >= 0 ? bb[db] : 1;
    SKIFF_CHECK_SHAPE(xa == xb || xa == 1 || xb == 1,
                      "matmul: expected batch dims that broadcast, got a {} and b {}", sa, sb);
    out.push_back(xa == 1 ? xb : xa);
  }
  out.push_back(sa[sa.size() - 2]);
  out.push_back(sb[sb.size() - 1]);
  return {{out, in[0].dtype()}};
}

Tensor matrix_transpose(const Tensor& x) { return transpose(x, -1, -2); }

// d(a b) = da b + a db; broadcast batch dims are summed back to each input's shape. Complex
// operands take the conjugate transpose (ga = g b^H, gb = a^H g; fft/complex.h convention).
std::vector<Tensor> matmul_backward(BackwardContext& ctx) {
  const Tensor& g = ctx.grad();
  Tensor ga, gb;
  if (ctx.needs_grad(0))
    ga = sum_to(detail::matmul_primitive(g, conj(matrix_transpose(ctx.input(1)))), ctx.input_meta(0).shape);
  if (ctx.needs_grad(1)) {
    const Tensor &a = ctx.input(0), &b = ctx.input(1);
    if (a.dim() == 2 && b.dim() == 2 && !b.is_contiguous() && matrix_transpose(b).is_contiguous()) {
      // b is a transposed matrix (linear's t(weight)): give its gradient the same layout,
      // (g^T conj(a))^T, so the gradient reaching the weight through the transpose is
      // contiguous like the weight, not a transposed view every optimizer step would copy.
      gb = matrix_transpose(detail::matmul_primitive(matrix_transpose(g), conj(a)));
    } else {
      gb = sum_to(detail::matmul_primitive(conj(matrix_transpose(a)), g), ctx.input_meta(1).shape);
    }
  }
  return {ga, gb};
}

const OpDef kMatmul{.name = "matmul", .infer = matmul_infer, .backward = matmul_backward, .save_inputs = 0b11};
SKIFF_REGISTER_OP(kMatmul);

DType product_dtype(const Tensor& a, const Tensor& b, const char* op) {
  DType t = promote_types(a.dtype(), b.dtype());
  SKIFF_CHECK_T(NotImplementedError, is_floating(t) || is_integral(t) || is_complex(t),
                "{}: expected float, integer or complex tensors, got {} and {}", op, dtype_name(a.dtype()),
                dtype_name(b.dtype()));
  return t;
}

}  // namespace

namespace detail {
Tensor matmul_primitive(const Tensor& a, const Tensor& b) { return call_op1(kMatmul, {a, b}); }
}  // namespace detail

Tensor matmul(const Tensor& a, const Tensor& b) {
  SKIFF_CHECK_SHAPE(a.dim() >= 1 && b.dim() >= 1, "matmul: expected tensors with at least 1 dim, got a {} and b {}",
                    a.shape(), b.shape());
  const DType t = product_dtype(a, b, "matmul");
  Tensor x = to(a, t), y = to(b, t);
  const int64_t k = x.shape().back();
  const int64_t kb = y.dim() == 1 ? y.shape()[0] : y.shape()[y.dim() - 2];
  SKIFF_CHECK_SHAPE(k == kb, "matmul: expected a [..., M, K] and b [..., K, N] with the same K, got a {} and b {}",
                    a.shape(), b.shape());
  if (x.dim() == 1 && y.dim() == 1) return reshape(detail::matmul_primitive(reshape(x, {1, k}), reshape(y, {k, 1})), {});
  const bool drop_rows = x.dim() == 1, drop_cols = y.dim() == 1;
  if (drop_rows) x = unsqueeze(x, 0);
  if (drop_cols) y = unsqueeze(y, -1);
  Tensor out;
  if (x.dim() > 2 && y.dim() == 2 && x.is_contiguous()) {
    // [..., M, K] x [K, N]: fold the batch into the rows, one large GEMM instead of many small ones.
    Shape rows_shape(x.shape().begin(), x.shape().end() - 1);
    Tensor flat = detail::matmul_primitive(reshape(x, {rows_shape.numel(), k}), y);
    rows_shape.push_back(y.shape()[1]);
    out = reshape(flat, rows_shape);
  } else {
    out = detail::matmul_primitive(x, y);
  }
  if (drop_cols) out = squeeze(out, -1);
  if (drop_rows) out = squeeze(out, -2);
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  SKIFF_CHECK_SHAPE(a.dim() == 3 && b.dim() == 3 && a.shape()[0] == b.shape()[0] && a.shape()[2] == b.shape()[1],
                    "bmm: expected a [B, M, K] and b [B, K, N], got a {} and b {}", a.shape(), b.shape());
  const DType t = product_dtype(a, b, "bmm");
  return detail::matmul_primitive(to(a, t), to(b, t));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  SKIFF_CHECK_SHAPE(weight.dim() == 2 && x.dim() >= 1 && x.shape().back() == weight.shape()[1],
                    "linear: expected x [..., in] and weight [out, in], got x {} and weight {}", x.shape(),
                    weight.shape());
  // Inputs with batch dims multiply as one [rows, in] matrix: one GEMM forward and, for the
  // weight's gradient, one GEMM instead of a batched product summed over the batch.
  Tensor out;
  if (x.dim() > 2) {
    std::vector<int64_t> dims(x.shape().begin(), x.shape().end());
    dims.back() = weight.shape()[0];
    out = reshape(matmul(reshape(x, {-1, x.shape().back()}), t(weight)), Shape(dims));
  } else {
    out = matmul(x, t(weight));
  }
  if (!bias.defined()) return out;
  SKIFF_CHECK_SHAPE(bias.dim() == 1 && bias.shape()[0] == weight.shape()[0],
                    "linear: expected bias [out] = [{}], got bias {} (weight {})", weight.shape()[0], bias.shape(),
                    weight.shape());
  return add(out, bias);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  SKIFF_CHECK_SHAPE(a.dim() == 1 && b.dim() == 1 && a.shape()[0] == b.shape()[0],
                    "dot: expected two 1-D tensors of the same length, got a {} and b {}", a.shape(), b.shape());
  return matmul(a, b);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  SKIFF_CHECK_SHAPE(a.dim() == 1 && b.dim() == 1, "outer: expected two 1-D tensors, got a {} and b {}", a.shape(),
                    b.shape());
  product_dtype(a, b, "outer");
  return mul(unsqueeze(a, 1), unsqueeze(b, 0));
}

}  // namespace skiff
