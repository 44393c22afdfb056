#include "framework/ops/common.h"

#include <algorithm>
#include <cmath>

#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {

std::vector<TensorMeta> infer_same_as_input(const std::vector<Tensor>& in, const Attrs&) {
  return {{in[0].shape(), in[0].dtype()}};
}

std::vector<TensorMeta> infer_broadcast(const std::vector<Tensor>& in, const Attrs&) {
  Shape s = in[0].shape();
  for (size_t i = 1; i < in.size(); ++i) s = broadcast_shapes(s, in[i].shape());
  return {{s, in[0].dtype()}};
}

std::vector<TensorMeta> infer_broadcast_bool(const std::vector<Tensor>& in, const Attrs& attrs) {
  auto m = infer_broadcast(in, attrs);
  m[0].dtype = DType::Bool;
  return m;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const int64_t lead = grad.dim() - shape.size();
  SKIFF_ASSERT(lead >= 0, "sum_to: cannot reduce {} to {}", grad.shape(), shape);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < lead; ++d) dims.push_back(d);
  for (int64_t d = 0; d < shape.size(); ++d)
    if (shape[d] == 1 && grad.shape()[lead + d] != 1) dims.push_back(lead + d);
  Tensor r = dims.empty() ? grad : sum(grad, dims, /*keepdim=*/true);
  return reshape(r, shape);
}

Tensor scalar_like(const Tensor& like, double value) {
  DType t = like.dtype();
  if (t == DType::Bool) t = std::floor(value) == value ? DType::Int64 : DType::Float32;
  else if (is_integral(t) && std::floor(value) != value) t = DType::Float32;
  return scalar_tensor(value, t);
}

std::vector<int64_t> normalize_dims(const std::vector<int64_t>& dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(d, ndim, op));
  std::sort(out.begin(), out.end());
  SKIFF_CHECK_INDEX(std::adjacent_find(out.begin(), out.end()) == out.end(), "{}: dimension listed twice", op);
  // A 0-d tensor's one implicit dim (0 or -1, as in PyTorch) holds its single value: reducing
  // over it reduces over no real dim. Passing {0} on would index the empty shape.
  if (ndim == 0) out.clear();
  return out;
}

}  // namespace skiff
