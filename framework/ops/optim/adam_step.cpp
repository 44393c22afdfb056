#include <cmath>

#include "framework/ops/op.h"
#include "framework/ops/optim/optim_ops.h"

namespace skiff {
namespace {

// No outputs: the kernel writes the parameter and the moments in place.
std::vector<TensorMeta> adam_step_infer(const std::vector<Tensor>& in, const Attrs& attrs) {
  const Tensor& p = in[0];
  SKIFF_CHECK_DTYPE(p.dtype() == DType::Float32 || p.dtype() == DType::Float64,
                    "adam_step: the parameter must be float32 or float64, got {}", dtype_name(p.dtype()));
  const size_t needed = attrs.get_bool("amsgrad") ? 5 : 4;
  SKIFF_CHECK(in.size() == needed, "adam_step: expected {} tensors, got {}", needed, in.size());
  static constexpr const char* kNames[] = {"param", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
  for (size_t i = 0; i < in.size(); ++i) {
    SKIFF_CHECK_SHAPE(in[i].shape() == p.shape(), "adam_step: {} has shape {}, the parameter {}", kNames[i],
                      in[i].shape(), p.shape());
    SKIFF_CHECK_DTYPE(in[i].dtype() == p.dtype(), "adam_step: {} is {}, the parameter {}", kNames[i],
                      dtype_name(in[i].dtype()), dtype_name(p.dtype()));
    SKIFF_CHECK(in[i].is_contiguous(), "adam_step: {} must be contiguous", kNames[i]);
  }
  return {};
}

const OpDef kAdamStep{.name = "adam_step", .infer = adam_step_infer};
SKIFF_REGISTER_OP(kAdamStep);

}  // namespace

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq, const AdamStep& s) {
  // Scalars in double as PyTorch computes them in Python; the kernel casts them.
  const double step_size = s.lr / (1.0 - std::pow(s.beta1, double(s.step)));
  const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(s.beta2, double(s.step)));
  Attrs a;
  a.set("lr", s.lr)
      .set("beta1", s.beta1)
      .set("beta2", s.beta2)
      .set("eps", s.eps)
      .set("weight_decay", s.weight_decay)
      .set("step_size", step_size)
      .set("bias_correction2_sqrt", bias_correction2_sqrt)
      .set("decoupled", s.decoupled)
      .set("amsgrad", s.amsgrad)
      .set("maximize", s.maximize);
  std::vector<Tensor> in{param, grad, exp_avg, exp_avg_sq};
  if (s.amsgrad) in.push_back(max_exp_avg_sq);
  call_op(kAdamStep, in, a);
}

}  // namespace skiff
