// prod (over any dims) and cumsum (running sum along one dim).
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/reduce/reduce_internal.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

using reduce_detail::reduced_shape;
using reduce_detail::unsqueeze_reduced;

DType accumulated_dtype(DType t) { return is_integral(t, true) ? DType::Int64 : t; }

// ---- prod ----
std::vector<TensorMeta> prod_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{reduced_shape(in[0].shape(), a.get_ints("dims"), a.get_bool("keepdim")), accumulated_dtype(in[0].dtype())}};
}

// d prod / d x_i = product of the other entries. Written without dividing by x_i
// when it is zero: with p = product of the non-zero entries and z = number of zeros
// in the slice, the gradient is p / x_i if z = 0, p at the zero if z = 1, else 0.
// First derivatives are exact for any zeros; second derivatives are exact when a
// slice has no zero (with one zero, the cross terms through the zero are dropped).
std::vector<Tensor> prod_backward(BackwardContext& ctx) {
  const auto& dims = ctx.attrs().get_ints("dims");
  const bool keepdim = ctx.attrs().get_bool("keepdim");
  Tensor x = ctx.input(0);
  Tensor g = unsqueeze_reduced(ctx.grad(), x.shape(), dims, keepdim);
  Tensor is_zero = eq(x, 0.0);
  Tensor zero_count = sum(is_zero, dims, /*keepdim=*/true);
  Tensor x_nonzero = where(is_zero, ones({}, x.dtype()), x);
  Tensor p = prod(x_nonzero, dims, /*keepdim=*/true);
  Tensor none_zero = eq(zero_count, 0.0), one_zero = eq(zero_count, 1.0);
  Tensor zero = zeros({}, x.dtype());
  Tensor grad = where(none_zero, div(p, x_nonzero), where(logical_and(one_zero, is_zero), p, zero));
  return {mul(grad, g)};
}

const OpDef kProd{.name = "prod", .infer = prod_infer, .backward = prod_backward, .save_inputs = 1};
SKIFF_REGISTER_OP(kProd);

// ---- cumsum: attr reverse sums from the end; each direction is the other's gradient ----
std::vector<TensorMeta> cumsum_infer(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[0].shape(), accumulated_dtype(in[0].dtype())}};
}
Tensor cumsum_directed(const Tensor& x, int64_t dim, bool reverse);
std::vector<Tensor> cumsum_backward(BackwardContext& ctx) {
  return {cumsum_directed(ctx.grad(), ctx.attrs().get_int("dim"), !ctx.attrs().get_bool("reverse"))};
}
const OpDef kCumsum{.name = "cumsum", .infer = cumsum_infer, .backward = cumsum_backward};
SKIFF_REGISTER_OP(kCumsum);

Tensor cumsum_directed(const Tensor& x, int64_t dim, bool reverse) {
  return call_op1(kCumsum, {x}, {{"dim", dim}, {"reverse", reverse}});
}

}  // namespace

Tensor prod(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<int64_t> d = normalize_dims(dims, x.dim(), "prod");
  return call_op1(kProd, {x}, {{"dims", d}, {"keepdim", keepdim}});
}

Tensor cumsum(const Tensor& x, int64_t dim) {
  if (x.dim() == 0) {
    wrap_dim(dim, 1, "cumsum");
    return reshape(cumsum(reshape(x, {1}), 0), {});
  }
  return cumsum_directed(x, wrap_dim(dim, x.dim(), "cumsum"), false);
}

}  // namespace skiff
