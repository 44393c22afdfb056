// cross_entropy: log_softmax over the class dim followed by nll_loss (class-index targets) or a
// weighted dot product with the target distribution (probability targets). A composite: no
// kernel and no backward of its own.
#include "framework/ops/common.h"
#include "framework/ops/loss/loss_utils.h"
#include "framework/ops/nn/norm.h"
#include "framework/ops/ops.h"

namespace skiff {
namespace {

// [C] -> [1, C, 1, ...] so it broadcasts against [N, C, d...].
Tensor class_weight_for_broadcast(const Tensor& weight, const Tensor& x) {
  Shape shape;
  shape.resize(x.dim(), 1);
  shape[1] = x.shape()[1];
  return reshape(weight, shape);
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double label_smoothing) {
  const char* op = "cross_entropy";
  detail::check_float_input(logits, op, "logits");
  SKIFF_CHECK_DTYPE(target.defined(), "{}: expected a target tensor, got an undefined tensor", op);
  SKIFF_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
              "{}: expected label_smoothing in [0, 1], got {}", op, label_smoothing);
  SKIFF_CHECK_SHAPE(logits.dim() >= 1, "{}: expected logits [N, C, d...] or [C], got a 0-d tensor", op);
  const bool unbatched = logits.dim() == 1;
  const bool probability_target = is_floating(target.dtype());
  Tensor x = unbatched ? unsqueeze(logits, 0) : logits;
  const int64_t num_classes = x.shape()[1];
  Tensor w;
  if (weight.defined()) {
    detail::check_float_input(weight, op, "weight");
    SKIFF_CHECK_SHAPE(weight.shape() == Shape{num_classes}, "{}: expected weight of shape [C] = [{}], got {}", op,
                      num_classes, weight.shape());
    w = class_weight_for_broadcast(detach(to(weight, x.dtype())), x);
  }
  Tensor log_probs = log_softmax(x, 1);
  const double smoothing_share = label_smoothing / double(num_classes);

  Tensor loss, total_weight;
  if (probability_target) {
    SKIFF_CHECK_SHAPE(target.shape() == logits.shape(),
                      "{}: expected probability target with logits' shape {}, got {} ({})", op, logits.shape(),
                      target.shape(), dtype_name(target.dtype()));
    Tensor t = to(unbatched ? unsqueeze(target, 0) : target, x.dtype());
    if (label_smoothing > 0.0) t = add(mul(t, 1.0 - label_smoothing), smoothing_share);
    Tensor weighted = mul(log_probs, t);
    if (w.defined()) weighted = mul(weighted, w);
    loss = neg(sum(weighted, {1}));
  } else {
    Tensor t = detail::class_indices(target, op, "target");
    if (unbatched) {
      SKIFF_CHECK_SHAPE(t.dim() == 0, "{}: expected a 0-d target for unbatched logits [C] = {}, got shape {}", op,
                        logits.shape(), target.shape());
      t = unsqueeze(t, 0);
    }
    std::vector<Tensor> picked = detail::nll_loss_elements(log_probs, t, weight, ignore_index);
    loss = picked[0];
    total_weight = detach(sum(picked[1]));
    if (label_smoothing > 0.0) {
      Tensor smooth = neg(sum(w.defined() ? mul(log_probs, w) : log_probs, {1}));
      smooth = where(eq(t, double(ignore_index)), zeros({}, smooth.dtype()), smooth);
      loss = add(mul(loss, 1.0 - label_smoothing), mul(smooth, smoothing_share));
    }
  }
  switch (reduction) {
    case Reduction::None: return unbatched ? squeeze(loss, 0) : loss;
    case Reduction::Sum: return sum(loss);
    case Reduction::Mean: return total_weight.defined() ? div(sum(loss), total_weight) : mean(loss);
  }
  SKIFF_ASSERT(false, "unknown Reduction {}", int(reduction));
}

}  // namespace skiff
