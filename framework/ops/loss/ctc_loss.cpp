// ctc_loss: per-sample negative log-likelihood of the targets under all CTC alignments (alpha
// recursion in the kernel), and ctc_loss_backward: its gradient w.r.t. log_probs (beta
// recursion). ctc_loss_backward has no backward of its own.
#include <cmath>

#include "framework/ops/common.h"
#include "framework/ops/loss/loss_utils.h"
#include "framework/ops/ops.h"

namespace skiff {
namespace {

// Shape/dtype contract shared by both ops. Inputs start with log_probs [T, N, C], targets (int64
// [N, S] or 1-D), input_lengths [N], target_lengths [N].
void check_ctc_inputs(const std::vector<Tensor>& in, size_t first, const char* op) {
  const Tensor &lp = in[first], &targets = in[first + 1], &input_lengths = in[first + 2],
               &target_lengths = in[first + 3];
  SKIFF_CHECK_DTYPE(lp.dtype() == DType::Float32 || lp.dtype() == DType::Float64,
                    "{}: expected float32 or float64 log_probs, got {}", op, dtype_name(lp.dtype()));
  SKIFF_CHECK_SHAPE(lp.dim() == 3, "{}: expected log_probs [T, N, C], got shape {}", op, lp.shape());
  const int64_t n = lp.shape()[1];
  SKIFF_CHECK_DTYPE(targets.dtype() == DType::Int64 && input_lengths.dtype() == DType::Int64 &&
                        target_lengths.dtype() == DType::Int64,
                    "{}: expected int64 targets and lengths, got {}, {}, {}", op, dtype_name(targets.dtype()),
                    dtype_name(input_lengths.dtype()), dtype_name(target_lengths.dtype()));
  SKIFF_CHECK_SHAPE(targets.dim() == 1 || (targets.dim() == 2 && targets.shape()[0] == n),
                    "{}: expected targets [N, S] = [{}, S] (padded) or 1-D (concatenated), got shape {}", op, n,
                    targets.shape());
  SKIFF_CHECK_SHAPE(input_lengths.shape() == Shape{n} && target_lengths.shape() == Shape{n},
                    "{}: expected input_lengths and target_lengths of shape [N] = [{}], got {} and {}", op, n,
                    input_lengths.shape(), target_lengths.shape());
}

void check_blank(int64_t blank, int64_t num_classes, const char* op) {
  SKIFF_CHECK_INDEX(blank >= 0 && blank < num_classes, "{}: expected blank in [0, C) = [0, {}), got {}", op,
                    num_classes, blank);
}

// Outputs: nll [N] and log_alpha [N, T, 2 * max_target_length + 1] (kept for the backward).
std::vector<TensorMeta> ctc_loss_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_ctc_inputs(in, 0, "ctc_loss");
  const Shape& s = in[0].shape();
  check_blank(a.get_int("blank"), s[2], "ctc_loss");
  const int64_t states = 2 * a.get_int("max_target_length") + 1;
  return {{{s[1]}, in[0].dtype()}, {{s[1], s[0], states}, in[0].dtype()}};
}

// Inputs: grad [N], log_probs, targets, input_lengths, target_lengths, nll [N], log_alpha.
std::vector<TensorMeta> ctc_loss_backward_infer(const std::vector<Tensor>& in, const Attrs& a) {
  check_ctc_inputs(in, 1, "ctc_loss_backward");
  const Tensor& lp = in[1];
  const int64_t n = lp.shape()[1];
  SKIFF_CHECK_SHAPE(in[0].shape() == Shape{n} && in[5].shape() == Shape{n} && in[6].dim() == 3 &&
                        in[6].shape()[0] == n && in[6].shape()[1] == lp.shape()[0],
                    "ctc_loss_backward: expected grad and nll [N] = [{}] and log_alpha [N, T, states], got {}, {}, {}",
                    n, in[0].shape(), in[5].shape(), in[6].shape());
  SKIFF_CHECK_DTYPE(in[0].dtype() == lp.dtype() && in[5].dtype() == lp.dtype() && in[6].dtype() == lp.dtype(),
                    "ctc_loss_backward: expected grad, nll and log_alpha of dtype {}", dtype_name(lp.dtype()));
  check_blank(a.get_int("blank"), lp.shape()[2], "ctc_loss_backward");
  return {{lp.shape(), lp.dtype()}};
}

const OpDef kCtcLossBackward{.name = "ctc_loss_backward", .infer = ctc_loss_backward_infer, .dispatch_input = 1};
SKIFF_REGISTER_OP(kCtcLossBackward);

std::vector<Tensor> ctc_loss_backward_formula(BackwardContext& ctx) {
  std::vector<Tensor> grads(4);
  if (!ctx.needs_grad(0)) return grads;
  grads[0] = call_op1(kCtcLossBackward,
                      {ctx.grad(0), ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.output(0),
                       ctx.output(1)},
                      {{"blank", ctx.attrs().get_int("blank")}});
  return grads;
}

const OpDef kCtcLoss{.name = "ctc_loss",
                     .infer = ctc_loss_infer,
                     .backward = ctc_loss_backward_formula,
                     .save_inputs = 0b1111,
                     .save_outputs = 0b11};
SKIFF_REGISTER_OP(kCtcLoss);

Tensor int64_argument(const Tensor& t, const char* what) {
  SKIFF_CHECK_DTYPE(t.defined() && is_integral(t.dtype()), "ctc_loss: expected integer {}, got {}", what,
                    t.defined() ? dtype_name(t.dtype()) : "an undefined tensor");
  return to(t, DType::Int64);
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction reduction, bool zero_infinity) {
  detail::check_float_input(log_probs, "ctc_loss", "log_probs");
  Tensor tg = int64_argument(targets, "targets");
  Tensor il = int64_argument(input_lengths, "input_lengths");
  Tensor tl = int64_argument(target_lengths, "target_lengths");
  // The size of log_alpha depends on the longest target; lengths live on the host.
  int64_t max_target_length = 0;
  if (tg.dim() == 2) {
    max_target_length = tg.shape()[1];
  } else {
    for (int64_t len : detail::contiguous_copy(tl).to_vector<int64_t>())
      max_target_length = std::max(max_target_length, len);
  }
  Tensor nll = call_op(kCtcLoss, {log_probs, tg, il, tl},
                       {{"blank", blank}, {"max_target_length", max_target_length}})[0];
  if (zero_infinity) nll = where(eq(nll, INFINITY), zeros({}, nll.dtype()), nll);
  switch (reduction) {
    case Reduction::None: return nll;
    case Reduction::Sum: return sum(nll);
    case Reduction::Mean: return mean(div(nll, clamp_min(to(tl, nll.dtype()), 1.0)));
  }
  SKIFF_ASSERT(false, "unknown Reduction {}", int(reduction));
}

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const std::vector<int64_t>& input_lengths,
                const std::vector<int64_t>& target_lengths, int64_t blank, Reduction reduction, bool zero_infinity) {
  return ctc_loss(log_probs, targets, from_vector(input_lengths), from_vector(target_lengths), blank, reduction,
                  zero_infinity);
}

}  // namespace skiff
