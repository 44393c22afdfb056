// Element-wise losses (mse, l1, smooth_l1, binary cross-entropy): composites of element-wise
// and reduce ops, so they need no kernel and inherit their (higher-order) gradients.
#include <cmath>

#include "framework/ops/common.h"
#include "framework/ops/loss/loss_utils.h"
#include "framework/ops/ops.h"

namespace skiff {

namespace detail {

Tensor reduce_loss(const Tensor& per_element, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return per_element;
    case Reduction::Sum: return sum(per_element);
    case Reduction::Mean: return mean(per_element);
  }
  SKIFF_ASSERT(false, "unknown Reduction {}", int(reduction));
}

void check_float_input(const Tensor& x, const char* op, const char* what) {
  SKIFF_CHECK_DTYPE(x.defined(), "{}: expected a tensor for {}, got an undefined tensor", op, what);
  SKIFF_CHECK_DTYPE(is_floating(x.dtype()), "{}: expected {} to be a floating-point tensor, got {} with shape {}", op,
                    what, dtype_name(x.dtype()), x.shape());
}

Tensor class_indices(const Tensor& t, const char* op, const char* what) {
  SKIFF_CHECK_DTYPE(is_integral(t.dtype()),
                    "{}: expected {} to hold integer class indices (int64), got {} with shape {}", op, what,
                    dtype_name(t.dtype()), t.shape());
  return to(t, DType::Int64);
}

}  // namespace detail

namespace {

// Checks the shared contract of the element-wise losses and returns target in input's dtype.
Tensor matching_target(const Tensor& input, const Tensor& target, const char* op) {
  detail::check_float_input(input, op, "input");
  SKIFF_CHECK_DTYPE(target.defined() && (is_floating(target.dtype()) || is_integral(target.dtype(), true)),
                    "{}: expected a real-valued target, got {}", op,
                    target.defined() ? dtype_name(target.dtype()) : "an undefined tensor");
  SKIFF_CHECK_SHAPE(input.shape() == target.shape(), "{}: expected target with input's shape {}, got {}", op,
                    input.shape(), target.shape());
  return to(target, input.dtype());
}

// An optional weight that must broadcast to `shape` without changing it.
Tensor broadcast_weight(const Tensor& w, const Tensor& like, const char* op, const char* what) {
  detail::check_float_input(w, op, what);
  SKIFF_CHECK_SHAPE(broadcast_shapes(w.shape(), like.shape(), op) == like.shape(),
                    "{}: expected {} broadcastable to the input shape {}, got {}", op, what, like.shape(), w.shape());
  return to(w, like.dtype());
}

// log(p) clamped to >= -100, with a zero (not NaN) gradient where p == 0.
Tensor clamped_log(const Tensor& p) {
  Tensor positive = gt(p, 0.0);
  Tensor safe = where(positive, p, 1.0);
  return clamp_min(where(positive, log(safe), -100.0), -100.0);
}

// log(1 + exp(-x)) without overflow; each branch only sees values where it is stable, so the
// gradient is exact everywhere, including x == 0.
Tensor softplus_of_negative(const Tensor& x) {
  Tensor nonneg = ge(x, 0.0);
  Tensor zero = zeros({}, x.dtype());
  Tensor xp = where(nonneg, x, zero), xn = where(nonneg, zero, x);
  return where(nonneg, log1p(exp(neg(xp))), sub(log1p(exp(xn)), xn));
}

}  // namespace

Reduction reduction_from_string(const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "mean") return Reduction::Mean;
  if (name == "sum") return Reduction::Sum;
  SKIFF_THROW(ValueError, "reduction: expected one of \"none\", \"mean\", \"sum\", got \"{}\"", name);
}

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::None: return "none";
    case Reduction::Mean: return "mean";
    case Reduction::Sum: return "sum";
  }
  return "?";
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  Tensor diff = sub(input, matching_target(input, target, "mse_loss"));
  return detail::reduce_loss(mul(diff, diff), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return detail::reduce_loss(abs(sub(input, matching_target(input, target, "l1_loss"))), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  SKIFF_CHECK(beta >= 0.0, "smooth_l1_loss: expected beta >= 0, got {}", beta);
  Tensor t = matching_target(input, target, "smooth_l1_loss");
  if (beta == 0.0) return l1_loss(input, t, reduction);
  Tensor d = abs(sub(input, t));
  Tensor quadratic = div(mul(mul(d, d), 0.5), beta);
  return detail::reduce_loss(where(lt(d, beta), quadratic, sub(d, 0.5 * beta)), reduction);
}

Tensor binary_cross_entropy(const Tensor& probabilities, const Tensor& target, const Tensor& weight,
                            Reduction reduction) {
  const char* op = "binary_cross_entropy";
  Tensor t = matching_target(probabilities, target, op);
  {
    NoGradGuard no_grad;
    Tensor outside = logical_or(lt(probabilities, 0.0), gt(probabilities, 1.0));
    SKIFF_CHECK(sum(outside).item<int64_t>() == 0,
                "{}: expected every probability in [0, 1], got values outside (input {} {}); use "
                "binary_cross_entropy_with_logits for logits",
                op, dtype_name(probabilities.dtype()), probabilities.shape());
  }
  Tensor loss = neg(add(mul(t, clamped_log(probabilities)), mul(sub(1.0, t), clamped_log(sub(1.0, probabilities)))));
  if (weight.defined()) loss = mul(loss, broadcast_weight(weight, probabilities, op, "weight"));
  return detail::reduce_loss(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  const char* op = "binary_cross_entropy_with_logits";
  Tensor t = matching_target(logits, target, op);
  Tensor sp_neg = softplus_of_negative(logits);  // -log(sigmoid(x))
  Tensor loss;
  if (pos_weight.defined()) {
    Tensor pw = broadcast_weight(pos_weight, logits, op, "pos_weight");
    // (1 - t) x + (1 + (pw - 1) t) * softplus(-x)
    loss = add(mul(sub(1.0, t), logits), mul(add(mul(sub(pw, 1.0), t), 1.0), sp_neg));
  } else {
    // softplus(x) - x t = (1 - t) x + softplus(-x)
    loss = add(mul(sub(1.0, t), logits), sp_neg);
  }
  if (weight.defined()) loss = mul(loss, broadcast_weight(weight, logits, op, "weight"));
  return detail::reduce_loss(loss, reduction);
}

}  // namespace skiff
