// gather / scatter / scatter_add / index_select / index_add / embedding: op
// definitions and their gradients. Each backward is built from the others, so
// higher-order gradients work (gather <-> scatter_add, index_select <-> index_add).
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/index/index.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

void check_index_dtype(const Tensor& index, const char* op) {
  SKIFF_CHECK_DTYPE(index.dtype() == DType::Int64, "{}: expected an int64 index tensor, got {}", op,
                    dtype_name(index.dtype()));
}

// index must have x's rank, and fit inside x on every dim except `dim`.
void check_index_fits(const Tensor& x, const Tensor& index, int64_t dim, const char* op, const char* what) {
  SKIFF_CHECK_SHAPE(index.dim() == x.dim(), "{}: expected index with as many dims as {} ({}), got index {} and {} {}",
                    op, what, x.dim(), index.shape(), what, x.shape());
  for (int64_t d = 0; d < x.dim(); ++d)
    SKIFF_CHECK_SHAPE(d == dim || index.shape()[d] <= x.shape()[d],
                      "{}: expected index.size({}) <= {}.size({}), got index {} and {} {}", op, d, what, d,
                      index.shape(), what, x.shape());
}

// ---- gather ----
std::vector<TensorMeta> gather_infer(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[1].shape(), in[0].dtype()}};
}
std::vector<Tensor> gather_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  Tensor zero = zeros(ctx.input_meta(0).shape, ctx.grad().dtype());
  return {scatter_add(zero, dim, ctx.input(1), ctx.grad()), Tensor()};
}
const OpDef kGather{.name = "gather", .infer = gather_infer, .backward = gather_backward, .save_inputs = 0b10};
SKIFF_REGISTER_OP(kGather);

// ---- scatter / scatter_add: inputs (x, index, src), src already index-shaped ----
std::vector<Tensor> scatter_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  Tensor index = ctx.input(1);
  Tensor gx, gsrc;
  if (ctx.needs_grad(0)) gx = scatter(ctx.grad(), dim, index, zeros(index.shape(), ctx.grad().dtype()));
  if (ctx.needs_grad(2)) gsrc = gather(ctx.grad(), dim, index);
  return {gx, Tensor(), gsrc};
}
std::vector<Tensor> scatter_add_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  return {ctx.grad(), Tensor(), ctx.needs_grad(2) ? gather(ctx.grad(), dim, ctx.input(1)) : Tensor()};
}
const OpDef kScatter{.name = "scatter", .infer = infer_same_as_input, .backward = scatter_backward,
                     .save_inputs = 0b010};
const OpDef kScatterAdd{.name = "scatter_add", .infer = infer_same_as_input, .backward = scatter_add_backward,
                        .save_inputs = 0b010};
SKIFF_REGISTER_OP(kScatter);
SKIFF_REGISTER_OP(kScatterAdd);

// ---- index_select / index_add ----
std::vector<TensorMeta> index_select_infer(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = in[0].shape();
  s[a.get_int("dim")] = in[1].numel();
  return {{s, in[0].dtype()}};
}
std::vector<Tensor> index_select_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  Tensor zero = zeros(ctx.input_meta(0).shape, ctx.grad().dtype());
  return {index_add(zero, dim, ctx.input(1), ctx.grad()), Tensor()};
}
std::vector<Tensor> index_add_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  return {ctx.grad(), Tensor(), ctx.needs_grad(2) ? index_select(ctx.grad(), dim, ctx.input(1)) : Tensor()};
}
const OpDef kIndexSelect{.name = "index_select", .infer = index_select_infer, .backward = index_select_backward,
                         .save_inputs = 0b10};
const OpDef kIndexAdd{.name = "index_add", .infer = infer_same_as_input, .backward = index_add_backward,
                      .save_inputs = 0b010};
SKIFF_REGISTER_OP(kIndexSelect);
SKIFF_REGISTER_OP(kIndexAdd);

// ---- embedding: inputs (weight [V, D], indices [...]) ----
std::vector<TensorMeta> embedding_infer(const std::vector<Tensor>& in, const Attrs&) {
  Shape s = in[1].shape();
  s.push_back(in[0].shape()[1]);
  return {{s, in[0].dtype()}};
}
std::vector<Tensor> embedding_backward(BackwardContext& ctx) {
  const Shape& wshape = ctx.input_meta(0).shape;
  Tensor flat_index = reshape(ctx.input(1), {-1});
  Tensor g = reshape(ctx.grad(), {flat_index.numel(), wshape[1]});
  int64_t padding_idx = ctx.attrs().get_int("padding_idx");
  if (padding_idx >= 0) {
    Tensor is_padding = unsqueeze(eq(flat_index, scalar_tensor(double(padding_idx), DType::Int64)), 1);
    g = where(is_padding, zeros({}, g.dtype()), g);
  }
  return {index_add(zeros(wshape, g.dtype()), 0, flat_index, g), Tensor()};
}
const OpDef kEmbedding{.name = "embedding", .infer = embedding_infer, .backward = embedding_backward,
                       .save_inputs = 0b10};
SKIFF_REGISTER_OP(kEmbedding);

Tensor scatter_common(const OpDef& op, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  const char* name = op.name.c_str();
  check_index_dtype(index, name);
  int64_t d = wrap_dim(dim, x.dim(), name);
  check_index_fits(x, index, d, name, "x");
  SKIFF_CHECK_SHAPE(src.dim() == index.dim(), "{}: expected src with as many dims as index ({}), got src {}", name,
                    index.dim(), src.shape());
  Tensor used = src;
  for (int64_t k = 0; k < src.dim(); ++k) {
    SKIFF_CHECK_SHAPE(index.shape()[k] <= src.shape()[k], "{}: expected index.size({}) <= src.size({}), got index {} "
                      "and src {}", name, k, k, index.shape(), src.shape());
    if (src.shape()[k] != index.shape()[k]) used = narrow(used, k, 0, index.shape()[k]);
  }
  return call_op1(op, {x, index, to(used, x.dtype())}, {{"dim", d}});
}

}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  check_index_dtype(index, "gather");
  int64_t d = wrap_dim(dim, x.dim(), "gather");
  check_index_fits(x, index, d, "gather", "x");
  return call_op1(kGather, {x, index}, {{"dim", d}});
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_common(kScatter, x, dim, index, src);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_common(kScatterAdd, x, dim, index, src);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  check_index_dtype(index, "index_select");
  SKIFF_CHECK_SHAPE(index.dim() <= 1, "index_select: expected a 1-D index, got shape {}", index.shape());
  int64_t d = wrap_dim(dim, x.dim(), "index_select");
  return call_op1(kIndexSelect, {x, index}, {{"dim", d}});
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  check_index_dtype(index, "index_add");
  SKIFF_CHECK_SHAPE(index.dim() <= 1, "index_add: expected a 1-D index, got shape {}", index.shape());
  int64_t d = wrap_dim(dim, x.dim(), "index_add");
  Shape expected = x.shape();
  expected[d] = index.numel();
  SKIFF_CHECK_SHAPE(src.shape() == expected, "index_add: expected src of shape {} (x {} with index length {} at dim "
                    "{}), got {}", expected, x.shape(), index.numel(), d, src.shape());
  return call_op1(kIndexAdd, {x, index, to(src, x.dtype())}, {{"dim", d}});
}

Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx) {
  SKIFF_CHECK_SHAPE(weight.dim() == 2, "embedding: expected a 2-D weight [V, D], got {}", weight.shape());
  check_index_dtype(indices, "embedding");
  int64_t pad = -1;
  if (padding_idx) {
    int64_t v = weight.shape()[0];
    SKIFF_CHECK_INDEX(*padding_idx >= -v && *padding_idx < v,
                      "embedding: expected padding_idx in [{}, {}), got {}", -v, v, *padding_idx);
    pad = *padding_idx < 0 ? *padding_idx + v : *padding_idx;
  }
  return call_op1(kEmbedding, {weight, indices}, {{"padding_idx", pad}});
}

}  // namespace skiff
