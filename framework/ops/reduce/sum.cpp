// sum and mean: the primitive reduction every broadcast gradient goes through.
#include "framework/ops/common.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

Shape reduced_shape(const Shape& in, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (int64_t d = 0; d < in.size(); ++d) {
    bool r = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!r) out.push_back(in[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

std::vector<TensorMeta> sum_infer(const std::vector<Tensor>& in, const Attrs& a) {
  DType t = in[0].dtype();
  if (is_integral(t, true)) t = DType::Int64;
  return {{reduced_shape(in[0].shape(), a.get_ints("dims"), a.get_bool("keepdim")), t}};
}

std::vector<Tensor> sum_backward(BackwardContext& ctx) {
  const auto& dims = ctx.attrs().get_ints("dims");
  const Shape& in_shape = ctx.input_meta(0).shape;
  Tensor g = ctx.grad();
  if (!ctx.attrs().get_bool("keepdim")) g = reshape(g, reduced_shape(in_shape, dims, true));
  return {expand(g, in_shape)};
}

const OpDef kSum{.name = "sum", .infer = sum_infer, .backward = sum_backward};
SKIFF_REGISTER_OP(kSum);

}  // namespace

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<int64_t> d = normalize_dims(dims, x.dim(), "sum");
  return call_op1(kSum, {x}, {{"dims", d}, {"keepdim", keepdim}});
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  SKIFF_CHECK_DTYPE(is_differentiable(x.dtype()), "mean: expected a float or complex tensor, got {}",
                    dtype_name(x.dtype()));
  std::vector<int64_t> d = normalize_dims(dims, x.dim(), "mean");
  int64_t n = 1;
  for (int64_t k : d) n *= x.shape()[k];
  return div(sum(x, d, keepdim), double(n));
}

}  // namespace skiff
