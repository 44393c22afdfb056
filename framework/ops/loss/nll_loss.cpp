// nll_loss: the op picking -weight[t] * log_probs[n, t, d] per target, and nll_loss_backward,
// which scatters a per-target gradient back into a dense [N, C, d...] tensor. Both are linear in
// their float input, so each one's backward is the other: gradients of any order work.
#include "framework/ops/common.h"
#include "framework/ops/loss/loss_utils.h"
#include "framework/ops/ops.h"

namespace skiff {
namespace {

// Inputs: log_probs [N, C, d...], target int64 [N, d...], weight [C]. Outputs: per-target loss
// [N, d...] and the weight each target counts with (0 where ignored), used by the mean.
std::vector<TensorMeta> nll_loss_infer(const std::vector<Tensor>& in, const Attrs&) {
  const Tensor &x = in[0], &target = in[1], &weight = in[2];
  SKIFF_CHECK_DTYPE(is_floating(x.dtype()), "nll_loss: expected floating-point log_probs, got {}",
                    dtype_name(x.dtype()));
  SKIFF_CHECK_DTYPE(target.dtype() == DType::Int64, "nll_loss: expected int64 target, got {}",
                    dtype_name(target.dtype()));
  SKIFF_CHECK_SHAPE(x.dim() >= 2, "nll_loss: expected log_probs [N, C, d...], got shape {}", x.shape());
  Shape expected;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (d != 1) expected.push_back(x.shape()[d]);
  SKIFF_CHECK_SHAPE(target.shape() == expected,
                    "nll_loss: expected target of shape {} for log_probs of shape {}, got {}", expected, x.shape(),
                    target.shape());
  SKIFF_CHECK_SHAPE(weight.shape() == Shape{x.shape()[1]} && weight.dtype() == x.dtype(),
                    "nll_loss: expected weight [C] = [{}] of dtype {}, got {} {}", x.shape()[1],
                    dtype_name(x.dtype()), weight.shape(), dtype_name(weight.dtype()));
  return {{expected, x.dtype()}, {expected, x.dtype()}};
}

// Inputs: grad [N, d...], target [N, d...], weight [C]; attr num_classes. Output [N, C, d...].
std::vector<TensorMeta> nll_loss_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  const Tensor &g = in[0], &target = in[1];
  SKIFF_CHECK_SHAPE(g.shape() == target.shape() && g.dim() >= 1,
                    "nll_loss_backward: expected grad and target of one shape [N, d...], got {} and {}", g.shape(),
                    target.shape());
  SKIFF_CHECK_DTYPE(is_floating(g.dtype()) && in[2].dtype() == g.dtype() && target.dtype() == DType::Int64,
                    "nll_loss_backward: expected float grad, int64 target and weight of grad's dtype, got {}, {}, {}",
                    dtype_name(g.dtype()), dtype_name(target.dtype()), dtype_name(in[2].dtype()));
  Shape out = g.shape();
  out.insert(1, a.get_int("num_classes"));
  return {{out, g.dtype()}};
}

Tensor nll_loss_raw(const Tensor& x, const Tensor& target, const Tensor& weight, int64_t ignore_index);
Tensor nll_loss_backward_raw(const Tensor& g, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                             int64_t num_classes);

std::vector<Tensor> nll_loss_backward_formula(BackwardContext& ctx) {
  if (!ctx.needs_grad(0)) return {Tensor(), Tensor(), Tensor()};
  const int64_t num_classes = ctx.input_meta(0).shape[1];
  return {nll_loss_backward_raw(ctx.grad(0), ctx.input(1), ctx.input(2), ctx.attrs().get_int("ignore_index"),
                                num_classes),
          Tensor(), Tensor()};
}

// nll_loss_backward is linear in grad: its adjoint is nll_loss itself.
std::vector<Tensor> nll_loss_backward_backward(BackwardContext& ctx) {
  if (!ctx.needs_grad(0)) return {Tensor(), Tensor(), Tensor()};
  return {nll_loss_raw(ctx.grad(0), ctx.input(1), ctx.input(2), ctx.attrs().get_int("ignore_index")),
          Tensor(), Tensor()};
}

const OpDef kNllLoss{.name = "nll_loss",
                     .infer = nll_loss_infer,
                     .backward = nll_loss_backward_formula,
                     .save_inputs = 0b110};
const OpDef kNllLossBackward{.name = "nll_loss_backward",
                             .infer = nll_loss_backward_infer,
                             .backward = nll_loss_backward_backward,
                             .save_inputs = 0b110};
SKIFF_REGISTER_OP(kNllLoss);
SKIFF_REGISTER_OP(kNllLossBackward);

Tensor nll_loss_raw(const Tensor& x, const Tensor& target, const Tensor& weight, int64_t ignore_index) {
  return call_op(kNllLoss, {x, target, weight}, {{"ignore_index", ignore_index}})[0];
}

Tensor nll_loss_backward_raw(const Tensor& g, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                             int64_t num_classes) {
  return call_op1(kNllLossBackward, {g, target, weight},
                  {{"ignore_index", ignore_index}, {"num_classes", num_classes}});
}

}  // namespace

namespace detail {

/// Per-target losses and counted weights for batched inputs (log_probs [N, C, d...]).
std::vector<Tensor> nll_loss_elements(const Tensor& log_probs, const Tensor& target, const Tensor& weight,
                                      int64_t ignore_index) {
  const char* op = "nll_loss";
  check_float_input(log_probs, op, "log_probs");
  Tensor t = class_indices(target, op, "target");
  SKIFF_CHECK_SHAPE(log_probs.dim() >= 2, "{}: expected log_probs [N, C, d...], got shape {}", op, log_probs.shape());
  const int64_t num_classes = log_probs.shape()[1];
  Tensor w;
  if (weight.defined()) {
    check_float_input(weight, op, "weight");
    SKIFF_CHECK_SHAPE(weight.shape() == Shape{num_classes}, "{}: expected weight of shape [C] = [{}], got {}", op,
                      num_classes, weight.shape());
    w = detach(to(weight, log_probs.dtype()));
  } else {
    w = ones({num_classes}, log_probs.dtype(), log_probs.device());
  }
  return call_op(kNllLoss, {log_probs, t, w}, {{"ignore_index", ignore_index}});
}

}  // namespace detail

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                Reduction reduction) {
  detail::check_float_input(log_probs, "nll_loss", "log_probs");
  SKIFF_CHECK_DTYPE(target.defined(), "nll_loss: expected a target tensor, got an undefined tensor");
  const bool unbatched = log_probs.dim() == 1;
  SKIFF_CHECK_SHAPE(!unbatched || target.dim() == 0,
                    "nll_loss: expected a 0-d target for unbatched log_probs [C] = {}, got shape {}",
                    log_probs.shape(), target.shape());
  Tensor x = unbatched ? unsqueeze(log_probs, 0) : log_probs;
  Tensor t = unbatched ? unsqueeze(target, 0) : target;
  std::vector<Tensor> out = detail::nll_loss_elements(x, t, weight, ignore_index);
  switch (reduction) {
    case Reduction::None: return unbatched ? squeeze(out[0], 0) : out[0];
    case Reduction::Sum: return sum(out[0]);
    case Reduction::Mean: return div(sum(out[0]), detach(sum(out[1])));
  }
  SKIFF_ASSERT(false, "unknown Reduction {}", int(reduction));
}

}  // namespace skiff
