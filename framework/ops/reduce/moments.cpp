// var, std_dev, norm and logsumexp: float reductions with dedicated kernels and
// gradients written with differentiable ops.
#include <cmath>
#include <limits>

#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/reduce/reduce_internal.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

using reduce_detail::reduced_count;
using reduce_detail::reduced_shape;
using reduce_detail::unsqueeze_reduced;

std::vector<TensorMeta> float_reduce_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{reduced_shape(in[0].shape(), a.get_ints("dims"), a.get_bool("keepdim")), in[0].dtype()}};
}

struct ReduceArgs {
  Tensor g;  ///< incoming gradient, broadcastable against the input
  std::vector<int64_t> dims;
};
ReduceArgs reduce_args(BackwardContext& ctx) {
  const auto& dims = ctx.attrs().get_ints("dims");
  return {unsqueeze_reduced(ctx.grad(), ctx.input_meta(0).shape, dims, ctx.attrs().get_bool("keepdim")), dims};
}
Tensor broadcastable_output(BackwardContext& ctx) {
  return unsqueeze_reduced(ctx.output(0), ctx.input_meta(0).shape, ctx.attrs().get_ints("dims"),
                           ctx.attrs().get_bool("keepdim"));
}

// ---- var: d/dx = 2 (x - mean) / (N - correction) ----
std::vector<Tensor> var_backward(BackwardContext& ctx) {
  auto [g, dims] = reduce_args(ctx);
  Tensor x = ctx.input(0);
  double denom = double(reduced_count(x.shape(), dims) - ctx.attrs().get_int("correction"));
  Tensor centered = sub(x, mean(x, dims, /*keepdim=*/true));
  return {mul(g, mul(centered, 2.0 / denom))};
}
const OpDef kVar{.name = "var", .infer = float_reduce_infer, .backward = var_backward, .save_inputs = 1};
SKIFF_REGISTER_OP(kVar);

// ---- norm ----
std::vector<Tensor> norm_backward(BackwardContext& ctx) {
  auto [g, dims] = reduce_args(ctx);
  const double p = ctx.attrs().get_float("p");
  Tensor x = ctx.input(0);
  Tensor zero = zeros({}, x.dtype());
  if (p == 0.0) return {zeros(x.shape(), x.dtype())};
  if (p == 1.0) return {mul(g, sign(x))};
  Tensor n = broadcastable_output(ctx);
  if (std::isinf(p)) {  // max |x| (or min |x|): shared equally among the entries that attain it
    Tensor hit = to(eq(abs(x), detach(n)), x.dtype());
    return {mul(g, mul(sign(x), div(hit, sum(hit, dims, /*keepdim=*/true))))};
  }
  // A zero norm means x == 0 in the slice; the gradient there is taken as 0.
  Tensor n_safe = where(eq(n, 0.0), ones({}, x.dtype()), n);
  if (p == 2.0) return {mul(g, div(x, n_safe))};
  Tensor num = mul(sign(x), pow(abs(x), p - 1.0));
  return {mul(g, div(num, pow(n_safe, p - 1.0)))};
}
const OpDef kNorm{.name = "norm", .infer = float_reduce_infer, .backward = norm_backward, .save_inputs = 1,
                  .save_outputs = 1};
SKIFF_REGISTER_OP(kNorm);

// ---- logsumexp: d/dx = exp(x - result), the softmax over the reduced dims ----
std::vector<Tensor> logsumexp_backward(BackwardContext& ctx) {
  auto [g, dims] = reduce_args(ctx);
  return {mul(g, exp(sub(ctx.input(0), broadcastable_output(ctx))))};
}
const OpDef kLogsumexp{.name = "logsumexp", .infer = float_reduce_infer, .backward = logsumexp_backward,
                       .save_inputs = 1, .save_outputs = 1};
SKIFF_REGISTER_OP(kLogsumexp);

/// Integer and bool inputs compute in float32; complex is rejected.
Tensor float_input(const Tensor& x, const char* op) {
  SKIFF_CHECK_DTYPE(!is_complex(x.dtype()), "{}: expected a real tensor, got {}", op, dtype_name(x.dtype()));
  return is_floating(x.dtype()) ? x : to(x, DType::Float32);
}

}  // namespace

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  Tensor xf = float_input(x, "var");
  SKIFF_CHECK(correction >= 0, "var: expected correction >= 0, got {}", correction);
  std::vector<int64_t> d = normalize_dims(dims, x.dim(), "var");
  return call_op1(kVar, {xf}, {{"dims", d}, {"keepdim", keepdim}, {"correction", correction}});
}

Tensor std_dev(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  return sqrt(var(x, dims, correction, keepdim));
}

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor xf = float_input(x, "norm");
  SKIFF_CHECK(!std::isnan(p), "norm: expected a number for p, got nan");
  std::vector<int64_t> d = normalize_dims(dims, x.dim(), "norm");
  if (p == -std::numeric_limits<double>::infinity())
    for (int64_t k : d)
      SKIFF_CHECK(x.shape()[k] > 0, "norm: p = -inf needs a non-empty dim, got dim {} of size 0 in {}", k, x.shape());
  return call_op1(kNorm, {xf}, {{"dims", d}, {"keepdim", keepdim}, {"p", p}});
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor xf = float_input(x, "logsumexp");
  std::vector<int64_t> d = normalize_dims(dims, x.dim(), "logsumexp");
  return call_op1(kLogsumexp, {xf}, {{"dims", d}, {"keepdim", keepdim}});
}

}  // namespace skiff
