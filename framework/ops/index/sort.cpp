// sort / argsort / topk: op definitions. Both ops return (values, int64 indices);
// the gradient of values is scattered back to the positions the values came from.
#include "framework/ops/common.h"
#include "framework/ops/index/index.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

void check_sortable(const Tensor& x, const char* op) {
  SKIFF_CHECK_DTYPE(!is_complex(x.dtype()), "{}: expected a real tensor, got {}", op, dtype_name(x.dtype()));
}

// Both ops select along dim: grad_x = zeros with grad(values) written at indices.
std::vector<Tensor> selection_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  Tensor zero = zeros(ctx.input_meta(0).shape, ctx.grad(0).dtype());
  return {scatter_add(zero, dim, detach(ctx.output(1)), ctx.grad(0))};
}

std::vector<TensorMeta> sort_infer(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[0].shape(), in[0].dtype()}, {in[0].shape(), DType::Int64}};
}
std::vector<TensorMeta> topk_infer(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = in[0].shape();
  s[a.get_int("dim")] = a.get_int("k");
  return {{s, in[0].dtype()}, {s, DType::Int64}};
}

const OpDef kSort{.name = "sort", .infer = sort_infer, .backward = selection_backward, .save_outputs = 0b10};
const OpDef kTopk{.name = "topk", .infer = topk_infer, .backward = selection_backward, .save_outputs = 0b10};
SKIFF_REGISTER_OP(kSort);
SKIFF_REGISTER_OP(kTopk);

// A 0-d input sorts as a 1-element vector.
ValuesIndices as_scalar_result(const ValuesIndices& r) {
  return {reshape(r.values, {}), reshape(r.indices, {})};
}

}  // namespace

ValuesIndices sort(const Tensor& x, int64_t dim, bool descending, bool /*stable: always stable*/) {
  check_sortable(x, "sort");
  if (x.dim() == 0) {
    wrap_dim(dim, 1, "sort");
    return as_scalar_result(sort(reshape(x, {1}), 0, descending));
  }
  int64_t d = wrap_dim(dim, x.dim(), "sort");
  auto out = call_op(kSort, {x}, {{"dim", d}, {"descending", descending}});
  return {out[0], out[1]};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  return sort(x, dim, descending, stable).indices;
}

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted: always sorted*/) {
  check_sortable(x, "topk");
  if (x.dim() == 0) {
    wrap_dim(dim, 1, "topk");
    SKIFF_CHECK(k == 0 || k == 1, "topk: expected k in [0, 1] for a 0-d tensor, got {}", k);
    ValuesIndices r = topk(reshape(x, {1}), k, 0, largest);
    return k == 1 ? as_scalar_result(r) : r;
  }
  int64_t d = wrap_dim(dim, x.dim(), "topk");
  SKIFF_CHECK(k >= 0 && k <= x.shape()[d], "topk: expected k in [0, {}] (size of dim {} of {}), got {}",
              x.shape()[d], d, x.shape(), k);
  auto out = call_op(kTopk, {x}, {{"dim", d}, {"k", k}, {"largest", largest}});
  return {out[0], out[1]};
}

}  // namespace skiff
