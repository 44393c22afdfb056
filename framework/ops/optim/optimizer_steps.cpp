// Declarations of the optimizer-update ops: adam_step, sgd_step, rmsprop_step and adagrad_step
// (optim_ops.h gives their formulas). They update their tensors in place and have no outputs or
// gradient.
#include <cmath>

#include "framework/ops/op.h"
#include "framework/ops/optim/optim_ops.h"

namespace skiff {
namespace {

/// The parameter is float32/float64 and every other tensor matches it (shape, dtype) and is
/// contiguous, which is all the kernels assume.
void check_state(const char* op, const std::vector<Tensor>& in, const std::vector<const char*>& names) {
  const Tensor& p = in[0];
  SKIFF_CHECK_DTYPE(p.dtype() == DType::Float32 || p.dtype() == DType::Float64,
                    "{}: the parameter must be float32 or float64, got {}", op, dtype_name(p.dtype()));
  SKIFF_CHECK(in.size() == names.size(), "{}: expected {} tensors, got {}", op, names.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    SKIFF_CHECK_SHAPE(in[i].shape() == p.shape(), "{}: {} has shape {}, the parameter {}", op, names[i],
                      in[i].shape(), p.shape());
    SKIFF_CHECK_DTYPE(in[i].dtype() == p.dtype(), "{}: {} is {}, the parameter {}", op, names[i],
                      dtype_name(in[i].dtype()), dtype_name(p.dtype()));
    SKIFF_CHECK(in[i].is_contiguous(), "{}: {} must be contiguous", op, names[i]);
  }
}

std::vector<TensorMeta> adam_step_infer(const std::vector<Tensor>& in, const Attrs& a) {
  if (a.get_bool("amsgrad"))
    check_state("adam_step", in, {"param", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"});
  else
    check_state("adam_step", in, {"param", "grad", "exp_avg", "exp_avg_sq"});
  return {};
}

std::vector<TensorMeta> sgd_step_infer(const std::vector<Tensor>& in, const Attrs& a) {
  if (a.get_float("momentum") != 0)
    check_state("sgd_step", in, {"param", "grad", "momentum_buffer"});
  else
    check_state("sgd_step", in, {"param", "grad"});
  return {};
}

std::vector<TensorMeta> rmsprop_step_infer(const std::vector<Tensor>& in, const Attrs& a) {
  std::vector<const char*> names{"param", "grad", "square_avg"};
  if (a.get_bool("centered")) names.push_back("grad_avg");
  if (a.get_float("momentum") > 0) names.push_back("momentum_buffer");
  check_state("rmsprop_step", in, names);
  return {};
}

std::vector<TensorMeta> adagrad_step_infer(const std::vector<Tensor>& in, const Attrs&) {
  check_state("adagrad_step", in, {"param", "grad", "sum"});
  return {};
}

const OpDef kAdamStep{.name = "adam_step", .infer = adam_step_infer};
const OpDef kSgdStep{.name = "sgd_step", .infer = sgd_step_infer};
const OpDef kRmspropStep{.name = "rmsprop_step", .infer = rmsprop_step_infer};
const OpDef kAdagradStep{.name = "adagrad_step", .infer = adagrad_step_infer};
SKIFF_REGISTER_OP(kAdamStep);
SKIFF_REGISTER_OP(kSgdStep);
SKIFF_REGISTER_OP(kRmspropStep);
SKIFF_REGISTER_OP(kAdagradStep);

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

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor& momentum_buffer, const SgdStep& s) {
  Attrs a;
  a.set("lr", s.lr)
      .set("momentum", s.momentum)
      .set("dampening", s.dampening)
      .set("weight_decay", s.weight_decay)
      .set("nesterov", s.nesterov)
      .set("maximize", s.maximize)
      .set("first", s.first);
  std::vector<Tensor> in{param, grad};
  if (s.momentum != 0) in.push_back(momentum_buffer);
  call_op(kSgdStep, in, a);
}

void rmsprop_step_(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor& grad_avg,
                   const Tensor& momentum_buffer, const RmspropStep& s) {
  Attrs a;
  a.set("lr", s.lr)
      .set("alpha", s.alpha)
      .set("eps", s.eps)
      .set("weight_decay", s.weight_decay)
      .set("momentum", s.momentum)
      .set("centered", s.centered)
      .set("maximize", s.maximize);
  std::vector<Tensor> in{param, grad, square_avg};
  if (s.centered) in.push_back(grad_avg);
  if (s.momentum > 0) in.push_back(momentum_buffer);
  call_op(kRmspropStep, in, a);
}

void adagrad_step_(const Tensor& param, const Tensor& grad, const Tensor& sum, const AdagradStep& s) {
  Attrs a;
  a.set("lr", s.lr).set("eps", s.eps).set("weight_decay", s.weight_decay).set("maximize", s.maximize);
  call_op(kAdagradStep, {param, grad, sum}, a);
}

}  // namespace skiff
