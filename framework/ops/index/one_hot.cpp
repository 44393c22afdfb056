// one_hot (a kernel op, not differentiable) and masked_fill (a composite of where).
#include "framework/ops/common.h"
#include "framework/ops/elementwise/binary.h"
#include "framework/ops/index/index.h"
#include "framework/ops/reduce/reduce.h"
#include "framework/ops/shape/shape_ops.h"

namespace skiff {
namespace {

std::vector<TensorMeta> one_hot_infer(const std::vector<Tensor>& in, const Attrs& a) {
  Shape s = in[0].shape();
  s.push_back(a.get_int("num_classes"));
  return {{s, DType::Int64}};
}
const OpDef kOneHot{.name = "one_hot", .infer = one_hot_infer};
SKIFF_REGISTER_OP(kOneHot);

void check_mask(const Tensor& x, const Tensor& mask) {
  SKIFF_CHECK_DTYPE(mask.dtype() == DType::Bool, "masked_fill: expected a bool mask, got {}",
                    dtype_name(mask.dtype()));
  SKIFF_CHECK_SHAPE(broadcast_shapes(x.shape(), mask.shape(), "masked_fill") == x.shape(),
                    "masked_fill: expected a mask that broadcasts to x {}, got mask {}", x.shape(), mask.shape());
}

}  // namespace

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  SKIFF_CHECK_DTYPE(indices.dtype() == DType::Int64, "one_hot: expected int64 indices, got {}",
                    dtype_name(indices.dtype()));
  if (num_classes < 0) {
    SKIFF_CHECK(num_classes == -1, "one_hot: expected num_classes >= 0 or -1 (infer), got {}", num_classes);
    SKIFF_CHECK(indices.numel() > 0, "one_hot: cannot infer num_classes from empty indices {}", indices.shape());
    num_classes = amax(indices).item<int64_t>() + 1;
  }
  return call_op1(kOneHot, {indices}, {{"num_classes", num_classes}});
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
  check_mask(x, mask);
  return where(mask, scalar_tensor(value, x.dtype()), x);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  check_mask(x, mask);
  SKIFF_CHECK_SHAPE(value.dim() == 0, "masked_fill: expected a 0-d value tensor, got shape {}", value.shape());
  return where(mask, to(value, x.dtype()), x);
}

}  // namespace skiff
