// concat / stack / split / chunk.
#include "framework/ops/common.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

std::vector<TensorMeta> concat_infer(const std::vector<Tensor>& in, const Attrs& a) {
  int64_t dim = a.get_int("dim");
  Shape s = in[0].shape();
  for (size_t i = 1; i < in.size(); ++i) {
    SKIFF_CHECK_SHAPE(in[i].dim() == s.size(), "concat: tensor {} has shape {}, expected {} dims like tensor 0 {}",
                      i, in[i].shape(), s.size(), in[0].shape());
    for (int64_t d = 0; d < s.size(); ++d)
      SKIFF_CHECK_SHAPE(d == dim || in[i].shape()[d] == s[d],
                        "concat: tensor {} has shape {}, incompatible with tensor 0 {} outside dim {}", i,
                        in[i].shape(), in[0].shape(), dim);
    s[dim] += in[i].shape()[dim];
  }
  return {{s, in[0].dtype()}};
}

std::vector<Tensor> concat_backward(BackwardContext& ctx) {
  int64_t dim = ctx.attrs().get_int("dim");
  std::vector<Tensor> grads;
  int64_t at = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    int64_t n = ctx.input_meta(i).shape[dim];
    grads.push_back(ctx.needs_grad(i) ? slice(ctx.grad(), dim, at, at + n) : Tensor());
    at += n;
  }
  return grads;
}

const OpDef kConcat{.name = "concat", .infer = concat_infer, .backward = concat_backward};
SKIFF_REGISTER_OP(kConcat);

}  // namespace

Tensor concat(const std::vector<Tensor>& xs, int64_t dim) {
  SKIFF_CHECK(!xs.empty(), "concat: expected at least one tensor");
  SKIFF_CHECK_SHAPE(xs[0].dim() > 0, "concat: cannot concatenate 0-d tensors (use stack)");
  dim = wrap_dim(dim, xs[0].dim(), "concat");
  if (xs.size() == 1) return xs[0];
  DType t = xs[0].dtype();
  for (const auto& x : xs) t = promote_types(t, x.dtype());
  std::vector<Tensor> in;
  for (const auto& x : xs) in.push_back(to(x, t));
  return call_op1(kConcat, in, {{"dim", dim}});
}

Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
  SKIFF_CHECK(!xs.empty(), "stack: expected at least one tensor");
  dim = wrap_dim(dim, xs[0].dim() + 1, "stack");
  std::vector<Tensor> in;
  for (size_t i = 0; i < xs.size(); ++i) {
    SKIFF_CHECK_SHAPE(xs[i].shape() == xs[0].shape(), "stack: tensor {} has shape {}, expected {}", i,
                      xs[i].shape(), xs[0].shape());
    in.push_back(unsqueeze(xs[i], dim));
  }
  return in.size() == 1 ? in[0] : concat(in, dim);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  dim = wrap_dim(dim, x.dim(), "split");
  SKIFF_CHECK(split_size > 0, "split: split_size must be positive, got {}", split_size);
  std::vector<Tensor> out;
  int64_t n = x.shape()[dim];
  for (int64_t at = 0; at < n; at += split_size) out.push_back(slice(x, dim, at, std::min(n, at + split_size)));
  if (out.empty()) out.push_back(x);
  return out;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  dim = wrap_dim(dim, x.dim(), "split");
  int64_t total = 0;
  for (int64_t s : sizes) {
    SKIFF_CHECK(s >= 0, "split: negative size {}", s);
    total += s;
  }
  SKIFF_CHECK_SHAPE(total == x.shape()[dim], "split: sizes [{}] sum to {}, but dim {} has size {}",
                    fmt::join(sizes, ", "), total, dim, x.shape()[dim]);
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, dim, at, at + s));
    at += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  SKIFF_CHECK(chunks > 0, "chunk: chunks must be positive, got {}", chunks);
  dim = wrap_dim(dim, x.dim(), "chunk");
  int64_t n = x.shape()[dim];
  return split(x, std::max<int64_t>(1, (n + chunks - 1) / chunks), dim);
}

}  // namespace skiff
