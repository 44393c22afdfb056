// amax/amin (over any dims) and max/min/argmax/argmin (along one dim, with positions).
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/index/index.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/reduce/reduce_internal.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

using reduce_detail::reduced_shape;
using reduce_detail::unsqueeze_reduced;

// ---- amax / amin ----
std::vector<TensorMeta> extreme_infer(const std::vector<Tensor>& in, const Attrs& a) {
  return {{reduced_shape(in[0].shape(), a.get_ints("dims"), a.get_bool("keepdim")), in[0].dtype()}};
}

// The gradient goes to every element equal to the result, split equally among ties.
std::vector<Tensor> extreme_backward(BackwardContext& ctx) {
  const auto& dims = ctx.attrs().get_ints("dims");
  const bool keepdim = ctx.attrs().get_bool("keepdim");
  const Shape& in_shape = ctx.input_meta(0).shape;
  Tensor g = unsqueeze_reduced(ctx.grad(), in_shape, dims, keepdim);
  Tensor result = unsqueeze_reduced(detach(ctx.output(0)), in_shape, dims, keepdim);
  Tensor hit = to(eq(ctx.input(0), result), g.dtype());
  Tensor share = div(hit, sum(hit, dims, /*keepdim=*/true));
  return {mul(share, g)};
}

const OpDef kAmax{.name = "amax", .infer = extreme_infer, .backward = extreme_backward, .save_inputs = 1,
                  .save_outputs = 1};
const OpDef kAmin{.name = "amin", .infer = extreme_infer, .backward = extreme_backward, .save_inputs = 1,
                  .save_outputs = 1};
SKIFF_REGISTER_OP(kAmax);
SKIFF_REGISTER_OP(kAmin);

// ---- max / min along one dim: outputs (values, int64 indices) ----
std::vector<TensorMeta> extreme_dim_infer(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = reduced_shape(in[0].shape(), {a.get_int("dim")}, a.get_bool("keepdim"));
  return {{s, in[0].dtype()}, {s, DType::Int64}};
}

// The gradient of each value goes to the position it was taken from.
std::vector<Tensor> extreme_dim_backward(BackwardContext& ctx) {
  const int64_t dim = ctx.attrs().get_int("dim");
  const bool keepdim = ctx.attrs().get_bool("keepdim");
  const Shape& in_shape = ctx.input_meta(0).shape;
  Tensor g = unsqueeze_reduced(ctx.grad(0), in_shape, {dim}, keepdim);
  Tensor idx = unsqueeze_reduced(detach(ctx.output(1)), in_shape, {dim}, keepdim);
  return {scatter_add(zeros(in_shape, g.dtype()), dim, idx, g)};
}

const OpDef kMaxDim{.name = "max_dim", .infer = extreme_dim_infer, .backward = extreme_dim_backward,
                    .save_outputs = 0b10};
const OpDef kMinDim{.name = "min_dim", .infer = extreme_dim_infer, .backward = extreme_dim_backward,
                    .save_outputs = 0b10};
SKIFF_REGISTER_OP(kMaxDim);
SKIFF_REGISTER_OP(kMinDim);

void check_real(const Tensor& x, const char* op) {
  SKIFF_CHECK_DTYPE(!is_complex(x.dtype()), "{}: expected a real tensor, got {}", op, dtype_name(x.dtype()));
}

Tensor extreme(const OpDef& op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  const char* name = op.name.c_str();
  check_real(x, name);
  std::vector<int64_t> d = normalize_dims(dims, x.dim(), name);
  for (int64_t k : d)
    SKIFF_CHECK(x.shape()[k] > 0, "{}: expected a non-empty dim to reduce, got dim {} of size 0 in {}", name, k,
                x.shape());
  return call_op1(op, {x}, {{"dims", d}, {"keepdim", keepdim}});
}

ValuesIndices extreme_dim(const OpDef& op, const char* name, const Tensor& x, int64_t dim, bool keepdim) {
  check_real(x, name);
  if (x.dim() == 0) {  // a 0-d tensor has one element at position 0
    wrap_dim(dim, 1, name);
    return {x, zeros({}, DType::Int64)};
  }
  int64_t d = wrap_dim(dim, x.dim(), name);
  SKIFF_CHECK(x.shape()[d] > 0, "{}: expected a non-empty dim to reduce, got dim {} of size 0 in {}", name, d,
              x.shape());
  auto out = call_op(op, {x}, {{"dim", d}, {"keepdim", keepdim}});
  return {out[0], out[1]};
}

}  // namespace

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return extreme(kAmax, x, dims, keepdim); }
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) { return extreme(kAmin, x, dims, keepdim); }

ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim(kMaxDim, "max", x, dim, keepdim); }
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim(kMinDim, "min", x, dim, keepdim); }

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return extreme_dim(kMaxDim, "argmax", x, dim, keepdim).indices;
}
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim) {
  NoGradGuard no_grad;
  return extreme_dim(kMinDim, "argmin", x, dim, keepdim).indices;
}

}  // namespace skiff
