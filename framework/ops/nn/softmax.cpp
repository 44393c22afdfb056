// softmax and log_softmax: primitive ops with a max-shifted CPU kernel.
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/elementwise/unary.h"
#include "framework/ops/nn/norm.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

// d softmax: y * (g - sum(g * y)) along dim.
std::vector<Tensor> softmax_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  Tensor y = ctx.output(0);
  const Tensor& g = ctx.grad();
  return {mul(y, sub(g, sum(mul(g, y), {dim}, true)))};
}

// d log_softmax: g - softmax * sum(g) along dim (softmax = exp(y)).
std::vector<Tensor> log_softmax_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  const Tensor& g = ctx.grad();
  return {sub(g, mul(exp(ctx.output(0)), sum(g, {dim}, true)))};
}

const OpDef kSoftmax{.name = "softmax", .infer = infer_same_as_input, .backward = softmax_backward,
                     .save_outputs = 1};
SKIFF_REGISTER_OP(kSoftmax);
const OpDef kLogSoftmax{.name = "log_softmax", .infer = infer_same_as_input, .backward = log_softmax_backward,
                        .save_outputs = 1};
SKIFF_REGISTER_OP(kLogSoftmax);

Tensor call_softmax(const OpDef& op, const Tensor& x, int64_t dim) {
  SKIFF_CHECK_DTYPE(is_floating(x.dtype()), "{}: expected a float tensor, got {}", op.name, dtype_name(x.dtype()));
  // A 0-d tensor behaves as one element along dim 0 / -1, as in PyTorch.
  int64_t ndim = std::max<int64_t>(x.dim(), 1);
  SKIFF_CHECK_INDEX(dim >= -ndim && dim < ndim, "{}: expected dim in [{}, {}), got {} for shape {}", op.name, -ndim,
                    ndim, dim, x.shape());
  if (dim < 0) dim += ndim;
  if (x.dim() == 0) return reshape(call_op1(op, {reshape(x, {1})}, {{"dim", int64_t(0)}}), {});
  return call_op1(op, {x}, {{"dim", dim}});
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) { return call_softmax(kSoftmax, x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return call_softmax(kLogSoftmax, x, dim); }

}  // namespace skiff
